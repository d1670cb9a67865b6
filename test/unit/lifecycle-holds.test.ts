import { expect } from 'chai';
import { nextTry, waitOf } from '../../src/modules/sending/emails/lifecycle-holds.js';
import type { QueueRow } from '../../src/modules/sending/emails/queue.repo.js';

const row = (attempts: number): QueueRow => ({
  id: 'q1',
  emailId: 'e1',
  projectId: 'p1',
  route: 'gmail.com',
  state: 'submitting',
  attempts,
  nextAttemptAt: 0,
  leaseOwner: 'n1',
  leaseUntil: 1,
  dataStarted: false,
  bulk: false,
  createdAt: 0,
  updatedAt: 0,
});
const schedule = [60_000, 300_000];

// When a queue row is tried again after an attempt (docs/delivery.md): the retry schedule counts
// the receiver's deferrals; holds of traffic shaping wait for their end and are not counted.
describe('the next try of a queue row: receiver deferrals and shaping holds', function () {
  it('waits the schedule after a deferral the receiver gave, the attempt counted', function () {
    expect(nextTry(row(1), [{ kind: 'deferred' }], { now: 1000, retryDelaysMs: schedule })).to.deep.equal({
      at: 61_000,
      attempts: 1,
    });
  });

  it('waits for the end of a suspension without counting the attempt, even past the end of the schedule', function () {
    const held = [{ kind: 'deferred', until: 900_000 }];
    expect(nextTry(row(3), held, { now: 1000, retryDelaysMs: schedule })).to.deep.equal({ at: 900_000, attempts: 2 });
  });

  it('takes the later of the two when one recipient was deferred by the receiver and another held', function () {
    const mixed = [{ kind: 'deferred' }, { kind: 'deferred', until: 10_000 }];
    expect(nextTry(row(1), mixed, { now: 1000, retryDelaysMs: schedule })).to.deep.equal({ at: 61_000, attempts: 1 });
  });

  it('counts the attempt when a message went out before the rest were held for their turn', function () {
    expect(
      nextTry(row(1), [{ kind: 'delivered' }], { now: 1000, retryDelaysMs: schedule, heldUntil: 3000 }),
    ).to.deep.equal({ at: 3000, attempts: 1 });
    // nothing went out: the turn only
    expect(nextTry(row(1), [], { now: 1000, retryDelaysMs: schedule, heldUntil: 3000 })).to.deep.equal({
      at: 3000,
      attempts: 0,
    });
  });
});

// Why a row waits, as the dashboard's emails page counts it (migration 0034).
describe('why a queue row waits', function () {
  it('names the first deferral the MTA holds back for a reason of its own, with its reply', function () {
    const outcomes = [
      { kind: 'delivered', reply: '250 ok' },
      { kind: 'deferred', reply: '450 4.2.1 try later' },
      {
        kind: 'deferred',
        reply: "warm-up: 203.0.113.20 has sent today's 50 messages to google",
        wait: 'warmup' as const,
      },
      { kind: 'deferred', reply: '451 4.4.3 DNS lookup for x.test failed: SERVFAIL', wait: 'dns' as const },
    ];
    expect(waitOf(outcomes)).to.deep.equal({
      kind: 'warmup',
      reason: "warm-up: 203.0.113.20 has sent today's 50 messages to google",
    });
  });

  it('is none when only the receiver deferred (or nothing was deferred)', function () {
    expect(waitOf([{ kind: 'deferred', reply: '450 4.2.1 try later' }])).to.equal(null);
    expect(waitOf([{ kind: 'delivered', reply: '250 ok' }])).to.equal(null);
    expect(waitOf([])).to.equal(null);
  });
});
