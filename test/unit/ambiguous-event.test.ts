import { expect } from 'chai';
import type { Email } from '../../src/modules/sending/emails/email.js';
import {
  acceptEmail,
  ambiguousAfterCrash,
  applyOutcomes,
  claimEmail,
  claimRow,
  retryAmbiguous,
  type EmailDraft,
  type RecipientOutcome,
} from '../../src/modules/sending/emails/lifecycle.js';
import { ambiguousDetails } from '../../src/modules/sending/emails/lifecycle-outcomes.js';
import { DEFAULT_SUBSCRIPTION, EVENT_TYPES } from '../../src/modules/notifying/events/event-types.js';
import type { QueueRow } from '../../src/modules/sending/emails/queue.repo.js';

const NOW = Date.parse('2026-11-30T10:00:00Z');
const LEASE = { owner: 'worker-1', until: NOW + 60_000 };
const SCHEDULE = [60_000];

const draft: EmailDraft = {
  id: 'msg_amb',
  projectId: 'prj_1',
  environment: 'live',
  from: 'Shop <orders@shop.test>',
  fromDomain: 'shop.test',
  to: ['a@one.test', 'b@one.test'],
  cc: [],
  bcc: [],
  replyTo: null,
  subject: 'Password reset',
  html: null,
  text: 'hi',
  templateId: null,
  templateVersion: null,
  tags: { kind: 'reset' },
  headers: {},
  requestId: 'req_1',
  scheduledAt: null,
  broadcastId: null,
  contactId: null,
  messageId: '<amb@mta.test>',
  createdAt: NOW,
};

/** The email and its one row (both recipients at one.test) as the worker holds them at an attempt. */
function claimed(email?: Email, rows?: QueueRow[], now = NOW) {
  const start =
    email && rows
      ? { email, rows }
      : acceptEmail(
          draft,
          draft.to.map((address) => ({ address, kind: 'to' as const, suppressed: null, route: 'one.test' })),
          NOW,
        );
  return { email: claimEmail(start.email, now), row: claimRow(start.rows[0], now, LEASE) };
}

const every = (email: Email, o: RecipientOutcome) => new Map(email.recipients.map((r) => [r.id, o]));
const RETRY =
  'Whether the server accepted the message is unknown; it will not be sent again by itself. Ask the recipient, then run `posthorn queue retry msg_amb` to send it again.';

describe('email.ambiguous (an email whose outcome is unknown)', function () {
  it('is an opt-in event type: in the enum, not in the default subscription', function () {
    expect(EVENT_TYPES).to.include('email.ambiguous');
    expect(DEFAULT_SUBSCRIPTION).to.not.include('email.ambiguous');
    expect(DEFAULT_SUBSCRIPTION).to.not.include('email.received');
  });

  context('when the connection is lost after the end of DATA', function () {
    it('emits one email.ambiguous per recipient, with the host, stage data, the last reply and what to do', function () {
      const { email, row } = claimed();
      const reply =
        'no answer after the message was transmitted (ECONNECTION: Connection closed unexpectedly); not sent again unless an operator retries it';
      const change = applyOutcomes(
        email,
        row,
        every(email, { kind: 'ambiguous', stage: 'data', reply, mx: 'mx1.one.test' }),
        { now: NOW, retryDelaysMs: SCHEDULE, otherRows: [] },
      );
      expect(change.email.status).to.equal('ambiguous');
      expect(change.events.map((e) => [e.type, e.recipient])).to.deep.equal([
        ['email.ambiguous', 'a@one.test'],
        ['email.ambiguous', 'b@one.test'],
      ]);
      const [first] = change.events;
      expect(first.data).to.deep.include({
        email_id: 'msg_amb',
        recipient: 'a@one.test',
        subject: 'Password reset',
        environment: 'live',
        from: 'Shop <orders@shop.test>',
        tags: { kind: 'reset' },
      });
      expect(first.data.details).to.deep.equal({
        host: 'mx1.one.test',
        stage: 'data',
        last_reply: reply,
        action: RETRY,
      });
      expect(first.simulated).to.equal(false);
    });
  });

  context('when the appliance stopped while the message was going out (recovery)', function () {
    it('says stage crash, with no host', function () {
      const { email, row } = claimed();
      const change = applyOutcomes(email, { ...row, dataStarted: true }, ambiguousAfterCrash(email, row), {
        now: NOW,
        retryDelaysMs: SCHEDULE,
        otherRows: [],
      });
      expect(change.events.map((e) => e.type)).to.deep.equal(['email.ambiguous', 'email.ambiguous']);
      expect(change.events[0].data.details).to.deep.include({ host: null, stage: 'crash', action: RETRY });
      expect((change.events[0].data.details as { last_reply: string }).last_reply).to.match(/appliance stopped/);
    });
  });

  it('is emitted again when a retried email ends ambiguous again', function () {
    const first = claimed();
    const o: RecipientOutcome = { kind: 'ambiguous', stage: 'data', reply: 'lost' };
    const once = applyOutcomes(first.email, first.row, every(first.email, o), {
      now: NOW,
      retryDelaysMs: SCHEDULE,
      otherRows: [],
    });
    const back = retryAmbiguous(once.email, [once.row], NOW + 1000);
    if ('refused' in back) throw new Error(back.refused);
    // the retry itself emits nothing; the next attempt's outcome does
    const again = claimed(back.email, back.rows, NOW + 2000);
    const twice = applyOutcomes(again.email, again.row, every(again.email, o), {
      now: NOW + 2000,
      retryDelaysMs: SCHEDULE,
      otherRows: [],
    });
    expect(twice.email.status).to.equal('ambiguous');
    expect(twice.events.map((e) => e.type)).to.deep.equal(['email.ambiguous', 'email.ambiguous']);
    expect(twice.events.filter((e) => once.events.some((x) => x.id === e.id))).to.deep.equal([]);
  });

  it('names only what the CLI can do: there is no API route for a retry', function () {
    expect(
      ambiguousDetails('msg_x', { stage: 'internal', reply: 'internal error during the attempt: boom' }, null),
    ).to.deep.equal({
      host: null,
      stage: 'internal',
      last_reply: 'internal error during the attempt: boom',
      action:
        'Whether the server accepted the message is unknown; it will not be sent again by itself. Ask the recipient, then run `posthorn queue retry msg_x` to send it again.',
    });
  });
});
