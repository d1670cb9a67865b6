import { expect } from 'chai';
import { freshPg, PG_URL, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';

// Two writers of one email on PostgreSQL take its locks in one order: its queue rows, then the
// email (store-change.ts lockForChange). A claim holds a due row (SKIP LOCKED) and then asks for the
// email; a reschedule that held the email while it waited for that row would deadlock with it
// (PostgreSQL aborts one after deadlock_timeout). Here a transaction does what the claim does, with a
// pause between its two locks, while the API reschedules the same email.
if (PG_URL) {
  describe('a reschedule and a claim of the same email wait for each other, never deadlock @pg', function () {
    let db: TestDatabase;
    let api: TestApi;
    let t: Tenant;
    before(async function () {
      db = await freshPg();
      await db.store.migrateLatest();
      api = await startTestApi(db.store);
      t = await api.tenant();
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    it('the reschedule waits for the claim to finish, then succeeds', async function () {
      const at = new Date(Date.now() + 3_600_000).toISOString();
      const sent = await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: ['someone@example.net'],
        subject: 's',
        text: 't',
        scheduled_at: at,
      });
      expect(sent.status).to.equal(202);
      const id = sent.body.id as string;
      const { knex } = db.store;
      const rows = await knex('outbound_queue').where({ email_id: id }).select('id');
      expect(rows).to.have.length(1);

      const later = new Date(Date.now() + 7_200_000).toISOString();
      let patched: Promise<{ status: number; body: { scheduled_at?: string } }> | null = null;
      await knex.transaction(async (trx) => {
        // a deadlock, if there is one, is found by this transaction first, and fails the test (the
        // appliance's side would be retried without a word)
        await trx.raw(`SET LOCAL deadlock_timeout = '20ms'`);
        // the claim's first lock: its due row, SKIP LOCKED
        const held = await trx('outbound_queue').where({ id: rows[0].id }).forUpdate().skipLocked().select('id');
        expect(held).to.have.length(1);
        patched = t.api.patch(`/v1/emails/${id}`, { scheduled_at: later });
        // let the reschedule take whatever it takes first and wait
        await new Promise((r) => setTimeout(r, 300));
        // the claim's second lock: the email (a reschedule holding it would make this a deadlock)
        await trx('emails').where({ id }).forUpdate().select('id');
      });
      const res = await patched!;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.scheduled_at).to.equal(later);
    });
  });
}
