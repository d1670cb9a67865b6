import { expect } from 'chai';
import { firstIdAt } from '../../src/lib/ids.js';
import {
  candidatesOf,
  doomedEmails,
  doomedEvents,
  type EmailCandidate,
  type EmailHolds,
  type EventRef,
} from '../../src/modules/operations/retention/retention-rules.js';

const CUTOFF = Date.parse('2026-10-01T00:00:00Z');
const OLD = CUTOFF - 1000;

/** One email `m1` delivered to one recipient before the cutoff, with its two events fanned out and no webhook delivery. */
function settled(over: Partial<EmailHolds> = {}): EmailHolds {
  return {
    recipients: [{ emailId: 'm1', status: 'delivered', updatedAt: OLD }],
    queueRows: [{ emailId: 'm1', state: 'done' }],
    events: [
      { id: 'e1', emailId: 'm1', fannedOut: true, createdAt: OLD },
      { id: 'e2', emailId: 'm1', fannedOut: true, createdAt: OLD },
    ],
    deliveries: [],
    ...over,
  };
}

describe('retention rules (issue 24)', function () {
  describe('candidatesOf (a page of the walk, in the order emails were made)', function () {
    const email = (
      id: string,
      status: EmailCandidate['status'],
      createdAt = OLD,
      updatedAt = createdAt,
    ): EmailCandidate => ({ id, status, createdAt, updatedAt });

    it('takes emails accepted, failed or suppressed and unchanged since before the cutoff; never one still moving or ambiguous', function () {
      const page = ['accepted', 'failed', 'suppressed', 'scheduled', 'queued', 'submitting', 'ambiguous'].map((s, i) =>
        email(`m${i}`, s as EmailCandidate['status']),
      );
      expect(candidatesOf(page, CUTOFF)).to.deep.equal({ candidates: ['m0', 'm1', 'm2'], done: false });
      expect(candidatesOf([email('m1', 'accepted', OLD, CUTOFF)], CUTOFF).candidates).to.deep.equal([]);
    });

    it('ends the walk at a page made wholly since the cutoff, not at one email made while the clock ran ahead', function () {
      expect(
        candidatesOf([email('m1', 'accepted'), email('m2', 'accepted', CUTOFF + 1), email('m3', 'failed')], CUTOFF),
      ).to.deep.equal({ candidates: ['m1', 'm3'], done: false });
      expect(
        candidatesOf([email('m4', 'accepted', CUTOFF), email('m5', 'accepted', CUTOFF + 1)], CUTOFF),
      ).to.deep.equal({ candidates: [], done: true });
      expect(candidatesOf([], CUTOFF)).to.deep.equal({ candidates: [], done: false });
    });
  });

  it('deletes a settled email with its events and their finished webhook deliveries', function () {
    const holds = settled({
      deliveries: [
        { id: 'd1', eventId: 'e1', state: 'succeeded' },
        { id: 'd2', eventId: 'e2', state: 'failed' },
      ],
    });
    expect(doomedEmails(['m1'], holds, CUTOFF)).to.deep.equal({
      emailIds: ['m1'],
      eventIds: ['e1', 'e2'],
      deliveryIds: ['d1', 'd2'],
    });
  });

  const kept = (holds: EmailHolds) => doomedEmails(['m1'], holds, CUTOFF);
  const nothing = { emailIds: [], eventIds: [], deliveryIds: [] };

  for (const status of ['queued', 'deferred', 'ambiguous'] as const) {
    it(`keeps an email with a ${status} recipient`, function () {
      expect(
        kept(
          settled({
            recipients: [
              { emailId: 'm1', status: 'delivered', updatedAt: OLD },
              { emailId: 'm1', status, updatedAt: OLD },
            ],
          }),
        ),
      ).to.deep.equal(nothing);
    });
  }

  it('keeps an email a recipient of which changed since the cutoff (a late bounce), or with a queue row not done', function () {
    expect(kept(settled({ recipients: [{ emailId: 'm1', status: 'bounced', updatedAt: CUTOFF }] }))).to.deep.equal(
      nothing,
    );
    expect(kept(settled({ queueRows: [{ emailId: 'm1', state: 'submitting' }] }))).to.deep.equal(nothing);
  });

  it('keeps an email whose event is recent (an open), not fanned out yet, or has a webhook delivery pending', function () {
    const withEvent = (e: Partial<EventRef>) =>
      settled({
        events: [
          { id: 'e1', emailId: 'm1', fannedOut: true, createdAt: OLD },
          { id: 'e3', emailId: 'm1', fannedOut: true, createdAt: OLD, ...e },
        ],
      });
    expect(kept(withEvent({ createdAt: CUTOFF + 5 }))).to.deep.equal(nothing);
    expect(kept(withEvent({ fannedOut: false }))).to.deep.equal(nothing);
    expect(kept({ ...withEvent({}), deliveries: [{ id: 'd1', eventId: 'e3', state: 'pending' }] })).to.deep.equal(
      nothing,
    );
  });

  it('decides each email of a batch alone', function () {
    const holds: EmailHolds = {
      recipients: [
        { emailId: 'm1', status: 'delivered', updatedAt: OLD },
        { emailId: 'm2', status: 'deferred', updatedAt: OLD },
      ],
      queueRows: [],
      events: [
        { id: 'e1', emailId: 'm1', fannedOut: true, createdAt: OLD },
        { id: 'e2', emailId: 'm2', fannedOut: true, createdAt: OLD },
      ],
      deliveries: [],
    };
    expect(doomedEmails(['m1', 'm2'], holds, CUTOFF)).to.deep.equal({
      emailIds: ['m1'],
      eventIds: ['e1'],
      deliveryIds: [],
    });
  });

  it('deletes events of no email made before the cutoff unless a webhook delivery waits for them', function () {
    const events: EventRef[] = [
      { id: 'r1', emailId: null, fannedOut: true, createdAt: OLD },
      { id: 'r2', emailId: null, fannedOut: true, createdAt: OLD },
      { id: 'r3', emailId: null, fannedOut: false, createdAt: OLD },
    ];
    const deliveries = [
      { id: 'd1', eventId: 'r1', state: 'succeeded' as const },
      { id: 'd2', eventId: 'r2', state: 'pending' as const },
    ];
    expect(doomedEvents(events, deliveries, CUTOFF)).to.deep.equal({
      emailIds: [],
      eventIds: ['r1'],
      deliveryIds: ['d1'],
    });
  });

  it('firstIdAt: every id made before a moment sorts below the first id made at it (the bench reads ids by age)', function () {
    const t = 1_700_000_000_000;
    // 2023-11-14T22:13:20Z in the id's time digits (Crockford base32), then the lowest random part
    expect(firstIdAt('email', t)).to.equal('msg_01hf7yat000000000000000000');
    expect(`${firstIdAt('email', t - 1).slice(0, 14)}${'z'.repeat(16)}` < firstIdAt('email', t)).to.equal(true);
    expect(firstIdAt('event', t).startsWith('evt_')).to.equal(true);
  });
});
