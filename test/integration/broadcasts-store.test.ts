import { expect } from 'chai';
import { DATABASE_KINDS, freshDatabase } from '../helpers/databases.js';
import { migrationSource } from '../../migrations/index.js';
import { storedEmail } from '../helpers/fixtures.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { systemClock } from '../../src/lib/time.js';
import { newId } from '../../src/lib/ids.js';
import { claimDueRows, insertQueueRows, type QueueRow } from '../../src/modules/sending/emails/queue.repo.js';

for (const kind of DATABASE_KINDS) {
  describe(`migration 0026 (broadcasts) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    it('rolls back without losing the emails, their recipients or the queue, and comes back', async function () {
      const db = await freshDatabase(kind);
      try {
        await db.store.migrateLatest();
        const project = await createProject({ store: db.store, clock: systemClock }, { name: 'm', approved: true });
        const email = await storedEmail(db.store, project.id, { rcpt: ['a@x.test', 'b@x.test'] });
        const { knex } = db.store;
        // down to before 0026: every later migration, then 0026 itself
        while (await knex.schema.hasTable('broadcasts')) await knex.migrate.down({ migrationSource });
        expect(await knex.schema.hasTable('broadcasts')).to.equal(false);
        expect(await knex.schema.hasColumn('emails', 'broadcast_id')).to.equal(false);
        expect(await knex.schema.hasColumn('outbound_queue', 'bulk')).to.equal(false);
        expect(
          Number(
            (
              (await knex('email_recipients').where({ email_id: email.id }).count({ n: '*' }).first()) as {
                n: number | string;
              }
            ).n,
          ),
        ).to.equal(2);
        await db.store.migrateLatest();
        expect(await knex.schema.hasColumn('emails', 'broadcast_id')).to.equal(true);
      } finally {
        await db.drop();
      }
    });
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`the outbound queue's two streams [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    it('claims due transactional rows before broadcast rows, and broadcast rows only up to their share', async function () {
      const db = await freshDatabase(kind);
      try {
        await db.store.migrateLatest();
        const project = await createProject({ store: db.store, clock: systemClock }, { name: 'q', approved: true });
        const now = Date.now();
        const row = async (bulk: boolean, dueIn: number): Promise<QueueRow> => {
          const email = await storedEmail(db.store, project.id);
          return {
            id: newId('queueRow', now),
            emailId: email.id,
            projectId: project.id,
            route: '',
            state: 'queued',
            attempts: 0,
            nextAttemptAt: now + dueIn,
            leaseOwner: null,
            leaseUntil: null,
            dataStarted: false,
            bulk,
            createdAt: now,
            updatedAt: now,
          };
        };
        // the broadcast rows were due first
        const rows = [
          await row(true, -5000),
          await row(true, -4000),
          await row(false, -10),
          await row(false, -5),
          await row(false, 60_000),
        ];
        await db.store.tx((trx) => insertQueueRows(trx, rows));
        const lease = { owner: 'w', until: now + 60_000 };
        const first = await db.store.tx((trx) => claimDueRows(trx, { now, limit: 3, lease, bulkLimit: 10 }));
        expect(first.map((q) => q.id)).to.deep.equal([rows[2].id, rows[3].id, rows[0].id]);
        expect(await db.store.tx((trx) => claimDueRows(trx, { now, limit: 10, lease, bulkLimit: 0 }))).to.deep.equal(
          [],
        );
        const last = await db.store.tx((trx) => claimDueRows(trx, { now, limit: 10, lease, bulkLimit: 10 }));
        expect(last.map((q) => q.id)).to.deep.equal([rows[1].id]);
      } finally {
        await db.drop();
      }
    });
  });
}
