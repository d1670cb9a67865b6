import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { storedEmail } from '../helpers/fixtures.js';
import { newId } from '../../src/lib/ids.js';
import { systemClock } from '../../src/lib/time.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import type { Email } from '../../src/modules/sending/emails/email.js';
import { findEmailsById } from '../../src/modules/sending/emails/emails.repo.js';
import { canWithdraw, claimEmail, claimRow } from '../../src/modules/sending/emails/lifecycle.js';
import { withdrawEmails } from '../../src/modules/sending/emails/store-change.js';
import { insertQueueRows, queueRowsOfEmails, type QueueRow } from '../../src/modules/sending/emails/queue.repo.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';
import { claimBatch } from '../../src/mta/claim-batch.js';

// The claim moves many queue rows and emails in a few statements (queue.repo.ts claimDueRows,
// email-rows.repo.ts saveClaimedEmails) instead of one change at a time through store-change.ts.
// What it stores must be what the state machine's own transition says: lifecycle.ts claimRow for
// each row, claimEmail for each email, column by column.
eachDatabase('the claim stores what lifecycle.ts claimRow and claimEmail decide', (db) => {
  let projectId: string;

  before(async function () {
    projectId = (await createProject({ store: db().store, clock: systemClock }, { name: 'claim', approved: true })).id;
  });

  /** A live email waiting in the queue: one row per recipient domain, due a second ago. */
  async function queued(
    rcpt: string[],
    o: { bulk?: boolean; broadcastId?: string } = {},
  ): Promise<{ email: Email; rows: QueueRow[] }> {
    const { store } = db();
    const now = Date.now();
    const email = await storedEmail(store, projectId, {
      environment: 'live',
      rcpt,
      ...(o.broadcastId ? { broadcastId: o.broadcastId } : {}),
    });
    const rows = rcpt.map((address, i): QueueRow => ({
      id: newId('queueRow', now + i),
      emailId: email.id,
      projectId,
      route: address.split('@')[1],
      state: 'queued',
      attempts: 0,
      nextAttemptAt: now - 1000,
      leaseOwner: null,
      leaseUntil: null,
      dataStarted: false,
      bulk: o.bulk ?? false,
      createdAt: now,
      updatedAt: now,
    }));
    await insertQueueRows(store.knex, rows);
    for (const [i, r] of email.recipients.entries()) {
      await store.knex('email_recipients').where({ id: r.id }).update({ queue_row_id: rows[i].id });
    }
    return { email, rows };
  }

  async function stored(emailId: string): Promise<{ email: Email; rows: QueueRow[] }> {
    const { knex } = db().store;
    const [email] = await findEmailsById(knex, [emailId], false);
    return { email: email, rows: await queueRowsOfEmails(knex, [emailId]) };
  }

  async function claim(now: number, lease: { owner: string; until: number }): Promise<number> {
    const batch = await db().store.tx((trx) =>
      claimBatch(trx, {
        now,
        limit: 100,
        lease,
        bulkLimit: 100,
        recordContext: () => {
          throw new Error('no instant attempt in this test');
        },
      }),
    );
    return batch.count;
  }

  it('rows and emails of transactional and broadcast mail, attempted or all suppressed, as the pure transition', async function () {
    const plain = await queued(['a@one.test', 'b@two.test']);
    const bulk = await queued(['c@three.test'], { bulk: true });
    const blocked = await queued(['gone@four.test']);
    await addSuppression(db().store.knex, {
      projectId,
      address: 'gone@four.test',
      reason: 'bounce',
      emailId: null,
      createdAt: Date.now(),
    });
    const before = await Promise.all([plain, bulk, blocked].map((x) => stored(x.email.id)));

    const now = Date.now();
    const lease = { owner: 'claim-test', until: now + 60_000 };
    expect(await claim(now, lease)).to.equal(4);

    for (const [i, x] of [plain, bulk, blocked].entries()) {
      const after = await stored(x.email.id);
      // an email all of whose recipients are suppressed since its 202 starts no SMTP transaction
      const attempted = x !== blocked;
      expect(after.email, `email ${i}`).to.deep.equal(claimEmail(before[i].email, now, attempted));
      expect(after.rows, `rows of email ${i}`).to.deep.equal(before[i].rows.map((q) => claimRow(q, now, lease)));
      expect(after.rows.every((q) => q.state === 'submitting' && q.attempts === 1)).to.equal(true);
    }
  });

  it('a row not yet due, or already claimed, is left as it is', async function () {
    const later = await queued(['x@five.test']);
    await db()
      .store.knex('outbound_queue')
      .where({ id: later.rows[0].id })
      .update({ next_attempt_at: Date.now() + 3_600_000 });
    const before = await stored(later.email.id);
    const now = Date.now();
    // everything else due was claimed by the test before: nothing is left to take
    expect(await claim(now, { owner: 'claim-test-2', until: now + 60_000 })).to.equal(0);
    expect(await stored(later.email.id)).to.deep.equal(before);
  });

  it("a broadcast's cancel deletes exactly the emails lifecycle.ts canWithdraw lets go", async function () {
    const broadcastId = newId('broadcast', Date.now());
    const waiting = await queued(['w@six.test'], { broadcastId, bulk: true });
    const retried = await queued(['r@six.test'], { broadcastId, bulk: true });
    const sending = await queued(['s@six.test'], { broadcastId, bulk: true });
    const { knex } = db().store;
    // a first attempt was deferred: back in the queue, attempted once
    await knex('outbound_queue').where({ id: retried.rows[0].id }).update({ attempts: 1 });
    await knex('outbound_queue').where({ id: sending.rows[0].id }).update({ state: 'submitting', attempts: 1 });
    await knex('emails').where({ id: sending.email.id }).update({ status: 'submitting', attempts: 1 });
    const before = await Promise.all([waiting, retried, sending].map((x) => stored(x.email.id)));
    const expected = before.map((b) => canWithdraw(b.email, b.rows));
    expect(expected).to.deep.equal([true, false, false]);

    expect(await db().store.tx((trx) => withdrawEmails(trx, broadcastId))).to.equal(1);
    for (const [i, x] of [waiting, retried, sending].entries()) {
      const left = await knex('emails').where({ id: x.email.id }).count({ n: '*' }).first();
      const rows = await knex('outbound_queue').where({ email_id: x.email.id }).count({ n: '*' }).first();
      const recipients = await knex('email_recipients').where({ email_id: x.email.id }).count({ n: '*' }).first();
      const n = expected[i] ? 0 : 1;
      expect(
        [left, rows, recipients].map((c) => Number(c!.n)),
        `email ${i}`,
      ).to.deep.equal([n, n, n]);
    }
  });
});
