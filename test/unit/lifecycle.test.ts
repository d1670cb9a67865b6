import { expect } from 'chai';
import { classifyBounce } from '../../src/modules/receiving/bounces/classify-bounce.js';
import type { Email } from '../../src/modules/sending/emails/email.js';
import {
  acceptEmail,
  ambiguousAfterCrash,
  applyOutcomes,
  claimEmail,
  claimRow,
  IllegalTransition,
  keepsQueueRow,
  requeueOrphan,
  reschedule,
  retryAmbiguous,
  type EmailDraft,
  type RecipientDraft,
  type RecipientOutcome,
} from '../../src/modules/sending/emails/lifecycle.js';
import type { QueueRow } from '../../src/modules/sending/emails/queue.repo.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
const LEASE = { owner: 'worker-1', until: NOW + 60_000 };
const SCHEDULE = [60_000, 300_000];

function draft(over: Partial<EmailDraft> = {}): EmailDraft {
  return {
    id: 'msg_01',
    projectId: 'prj_1',
    environment: 'live',
    from: 'Shop <orders@shop.test>',
    fromDomain: 'shop.test',
    to: ['a@one.test', 'b@two.test'],
    cc: [],
    bcc: [],
    replyTo: null,
    subject: 'Your order',
    html: null,
    text: 'hi',
    templateId: null,
    templateVersion: null,
    tags: {},
    headers: {},
    requestId: 'req_1',
    scheduledAt: null,
    broadcastId: null,
    contactId: null,
    messageId: '<01@mta.test>',
    createdAt: NOW,
    ...over,
  };
}

const rcpt = (address: string, suppressed: RecipientDraft['suppressed'] = null): RecipientDraft => ({
  address,
  kind: 'to',
  suppressed,
  route: address.split('@')[1],
});

/** POST → claimed: the email and its first row as the worker holds them. */
function claimed(over: Partial<EmailDraft> = {}, to = ['a@one.test']) {
  const { email, rows } = acceptEmail(
    draft(over),
    to.map((a) => rcpt(a)),
    NOW,
  );
  const row = claimRow(rows[0], NOW, LEASE);
  return { email: claimEmail(email, NOW), row, others: rows.slice(1) };
}

const all = (email: Email, row: QueueRow, o: RecipientOutcome) =>
  new Map(email.recipients.filter((r) => r.queueRowId === row.id).map((r) => [r.id, o]));
const apply = (email: Email, row: QueueRow, o: RecipientOutcome, others: QueueRow[] = [], now = NOW) =>
  applyOutcomes(email, row, all(email, row, o), { now, retryDelaysMs: SCHEDULE, otherRows: others });
const types = (events: Array<{ type: string }>) => events.map((e) => e.type);

/** A 5yz reply as the MTA hands it to the state machine: through the one classifier. */
const bounced = (reply: string): RecipientOutcome => ({
  kind: 'bounced',
  bounce: classifyBounce({ diagnostic: reply, final: true }),
  reply,
});
describe('the email state machine (LIFECYCLE.md)', function () {
  context('Email', function () {
    it('POST → queued, one queue row per recipient domain, nothing emitted', function () {
      const { email, rows, events } = acceptEmail(
        draft(),
        [rcpt('a@one.test'), rcpt('b@two.test'), rcpt('c@one.test')],
        NOW,
      );
      expect(email).to.include({ status: 'queued', attempts: 0, acceptedAt: null });
      expect(rows.map((q) => [q.route, q.state, q.nextAttemptAt])).to.deep.equal([
        ['one.test', 'queued', NOW],
        ['two.test', 'queued', NOW],
      ]);
      expect(email.recipients.map((r) => r.queueRowId)).to.deep.equal([rows[0].id, rows[1].id, rows[0].id]);
      expect(events).to.deep.equal([]);
    });

    it('POST with a future scheduled_at → scheduled (email.scheduled), its rows due then', function () {
      const at = NOW + 3_600_000;
      const { email, rows, events } = acceptEmail(draft({ scheduledAt: at }), [rcpt('a@one.test')], NOW);
      expect(email.status).to.equal('scheduled');
      expect(rows[0].nextAttemptAt).to.equal(at);
      expect(types(events)).to.deep.equal(['email.scheduled']);
      expect(events[0].data.details).to.deep.equal({ scheduled_at: new Date(at).toISOString() });
    });

    it('some recipients suppressed → those recipients suppressed (email.suppressed each, with the reason), on no queue row', function () {
      const { email, rows, events } = acceptEmail(draft(), [rcpt('a@one.test'), rcpt('gone@two.test', 'bounce')], NOW);
      expect(email.recipients.map((r) => [r.status, r.queueRowId === null])).to.deep.equal([
        ['queued', false],
        ['suppressed', true],
      ]);
      expect(rows).to.have.length(1);
      expect(types(events)).to.deep.equal(['email.suppressed']);
      expect(events[0]).to.include({ recipient: 'gone@two.test' });
      expect(events[0].data.details).to.deep.equal({ reason: 'bounce' });
    });

    it('claim: queued → submitting, one attempt counted (none when nobody is left to send to)', function () {
      const { email, row } = claimed();
      expect(email).to.include({ status: 'submitting', attempts: 1 });
      expect(row).to.include({ state: 'submitting', attempts: 1, leaseOwner: 'worker-1', dataStarted: false });
      expect(claimEmail(acceptEmail(draft(), [rcpt('a@one.test')], NOW).email, NOW, false).attempts).to.equal(0);
    });

    it('provider answered 250 → accepted: email.sent once, before email.delivered', function () {
      const { email, row, others } = claimed({}, ['a@one.test', 'b@two.test']);
      const first = apply(email, row, { kind: 'delivered', reply: '250 ok', mx: 'mx.one.test' }, others);
      expect(first.email).to.include({ status: 'accepted', acceptedAt: NOW });
      expect(types(first.events)).to.deep.equal(['email.sent', 'email.delivered']);
      expect(first.row.state).to.equal('done');
      // the other domain's row goes out later: no second email.sent
      const second = apply(
        claimEmail(first.email, NOW),
        claimRow(others[0], NOW, LEASE),
        { kind: 'delivered', reply: '250 ok' },
        [first.row],
      );
      expect(second.email.status).to.equal('accepted');
      expect(types(second.events)).to.deep.equal(['email.delivered']);
    });

    it('every recipient hard-failed → failed, email.failed once for the email', function () {
      const { email, row } = claimed();
      const change = apply(email, row, bounced('550 5.1.1 no such user'));
      expect(change.email).to.include({ status: 'failed', statusReason: 'every recipient bounced' });
      expect(types(change.events)).to.deep.equal(['email.bounced', 'email.failed']);
    });

    it('no answer after the end of DATA → ambiguous, never queued again by itself; posthorn queue retry puts it back, due now', function () {
      const { email, row } = claimed();
      const change = apply(email, row, { kind: 'ambiguous', stage: 'data', reply: 'connection lost after DATA' });
      expect(change.email.status).to.equal('ambiguous');
      expect(change.row.state).to.equal('done');
      expect(types(change.events)).to.deep.equal(['email.ambiguous']);
      const later = NOW + 5000;
      const back = retryAmbiguous(change.email, [change.row], later);
      if ('refused' in back) throw new Error(back.refused);
      expect(back.email.status).to.equal('queued');
      expect(back.recipients.map((r) => r.status)).to.deep.equal(['queued']);
      expect(back.rows.map((q) => [q.state, q.nextAttemptAt, q.leaseOwner])).to.deep.equal([['queued', later, null]]);
      expect(retryAmbiguous(back.email, back.rows, later))
        .to.have.property('refused')
        .that.matches(/no ambiguous recipient/);
    });

    it('crash while submitting: back to queued when DATA never began, ambiguous when it may have', function () {
      const { email, row } = claimed();
      const back = requeueOrphan(email, row, [], NOW + 1000);
      expect(back.email.status).to.equal('queued');
      expect(back.row).to.include({ state: 'queued', nextAttemptAt: NOW + 1000, leaseOwner: null });
      const unsure = applyOutcomes(email, { ...row, dataStarted: true }, ambiguousAfterCrash(email, row), {
        now: NOW,
        retryDelaysMs: SCHEDULE,
        otherRows: [],
      });
      expect(unsure.email.status).to.equal('ambiguous');
      expect(unsure.email.recipients.map((r) => r.status)).to.deep.equal(['ambiguous']);
    });

    it('a reschedule moves only an email still waiting for its time (scheduled, or queued with a future scheduled_at and no attempt)', function () {
      const later = NOW + 86_400_000;
      const waiting = acceptEmail(draft({ scheduledAt: NOW + 3_600_000 }), [rcpt('a@one.test')], NOW);
      const moved = reschedule(waiting.email, waiting.rows, later, NOW);
      if ('refused' in moved) throw new Error(moved.refused);
      expect(moved.email).to.include({ status: 'scheduled', scheduledAt: later });
      expect(moved.rows[0].nextAttemptAt).to.equal(later);
      expect(types(moved.events)).to.deep.equal(['email.scheduled']);
      const { email, row } = claimed({ scheduledAt: NOW - 1 });
      expect(reschedule(email, [row], later, NOW))
        .to.have.property('refused')
        .that.matches(/is submitting/);
      const now = acceptEmail(draft(), [rcpt('a@one.test')], NOW);
      expect(reschedule(now.email, now.rows, later, NOW)).to.have.property('refused');
    });
  });

  context('Recipient', function () {
    it('4xx → deferred, email.delivery_delayed once per recipient, retried on the schedule; retries run out → failed (email.failed)', function () {
      const { email, row } = claimed();
      const first = apply(email, row, { kind: 'deferred', reply: '451 try later' });
      expect(first.email.status).to.equal('queued');
      expect(first.row).to.include({ state: 'queued', nextAttemptAt: NOW + SCHEDULE[0] });
      expect(types(first.events)).to.deep.equal(['email.delivery_delayed']);
      const second = apply(claimEmail(first.email, NOW), claimRow(first.row, NOW, LEASE), {
        kind: 'deferred',
        reply: '451 try later',
      });
      expect(types(second.events)).to.deep.equal([]);
      expect(second.row.nextAttemptAt).to.equal(NOW + SCHEDULE[1]);
      const last = apply(claimEmail(second.email, NOW), claimRow(second.row, NOW, LEASE), {
        kind: 'deferred',
        reply: '451 try later',
      });
      expect(last.email.recipients[0].status).to.equal('failed');
      expect(last.email.status).to.equal('failed');
      expect(types(last.events)).to.deep.equal(['email.failed']);
    });

    it('5xx → bounced; a Permanent bounce of live mail suppresses the address, a soft one of a lasting reason may (the project decides), other soft ones and test mail do not', function () {
      const live = claimed();
      const may = (reply: string) =>
        apply(live.email, live.row, bounced(reply)).suppress.map((s) => [
          s.address,
          s.reason,
          s.bounce?.reason,
          s.bounce?.bounceType,
        ]);
      expect(may('550 5.1.1 no such user')).to.deep.equal([['a@one.test', 'bounce', 'user_unknown', 'Permanent']]);
      // soft: only counted against the project's --soft-bounce-suppression (suppress-after-mail.ts)
      expect(may('552 5.2.2 mailbox full')).to.deep.equal([['a@one.test', 'bounce', 'mailbox_full', 'Transient']]);
      // a blocked sending IP says nothing about the address
      expect(may('554 5.7.1 Client host [192.0.2.1] blocked using zen.spamhaus.org')).to.deep.equal([]);
      const test = claimed({ environment: 'test' });
      expect(apply(test.email, test.row, bounced('550 5.1.1 no such user')).suppress).to.deep.equal([]);
    });

    it('a complaint: delivered, then complained (email.complained), and the address suppressed', function () {
      const { email, row } = claimed();
      const change = apply(email, row, { kind: 'complained', reply: '250 ok' });
      expect(change.email.recipients[0].status).to.equal('complained');
      expect(types(change.events)).to.deep.equal(['email.sent', 'email.delivered', 'email.complained']);
      expect(change.suppress).to.deep.equal([{ address: 'a@one.test', reason: 'complaint' }]);
    });
  });

  context('moves LIFECYCLE does not allow', function () {
    it('are refused as faults of ours: a failed email is not sent, a delivered recipient is not queued again', function () {
      const { email, row } = claimed();
      const failed = apply(email, row, bounced('550 5.1.1 no such user'));
      expect(() => claimEmail(failed.email, NOW)).to.throw(
        IllegalTransition,
        'illegal email transition failed → submitting',
      );
      const delivered = apply(email, row, { kind: 'delivered', reply: '250' });
      expect(() => claimRow(delivered.row, NOW, LEASE)).to.throw(
        IllegalTransition,
        'illegal queue row transition done → submitting',
      );
      expect(() =>
        applyOutcomes(
          delivered.email,
          claimRow({ ...delivered.row, state: 'queued' }, NOW, LEASE),
          all(delivered.email, delivered.row, { kind: 'deferred', reply: '451' }),
          { now: NOW, retryDelaysMs: SCHEDULE, otherRows: [] },
        ),
      ).to.throw(IllegalTransition, 'recipient transition delivered → deferred');
    });
  });

  context('queue rows', function () {
    it('a finished row of test mail is dropped unless a recipient is ambiguous; live mail keeps its finished rows', function () {
      const test = claimed({ environment: 'test' });
      const done = apply(test.email, test.row, { kind: 'delivered', reply: '250' });
      expect(keepsQueueRow(done.email, done.row)).to.equal(false);
      const unsure = apply(test.email, test.row, { kind: 'ambiguous', stage: 'data', reply: '' });
      expect(keepsQueueRow(unsure.email, unsure.row)).to.equal(true);
      const live = claimed();
      const sent = apply(live.email, live.row, { kind: 'delivered', reply: '250' });
      expect(keepsQueueRow(sent.email, sent.row)).to.equal(true);
    });
  });
});
