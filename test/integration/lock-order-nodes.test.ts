import { expect } from 'chai';
import { freshPg, PG_URL, type TestDatabase } from '../helpers/databases.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { AcceptQueue } from '../../src/modules/sending/emails/accept-batch.js';
import type { AcceptRequest } from '../../src/modules/sending/emails/accept-rules.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import type { Project } from '../../src/modules/account/projects/projects.repo.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { openStore, type Store } from '../../src/store/store.js';

// Two nodes' accept batches on one PostgreSQL database, each batch holding live sends of two
// projects in opposite orders (node A: P1 then P2; node B: P2 then P1). Each batch counts its
// projects' usage, so each locks both projects' rows: in the order the sends came, they would
// deadlock (PostgreSQL aborts one after deadlock_timeout). The accept locks its projects' rows
// first, in id order (docs/ARCHITECTURE.md, "One lock order"): the batches wait for each other.
if (PG_URL) {
  describe('two nodes accepting live mail of the same projects in opposite orders never deadlock @pg', function () {
    this.timeout(60_000);
    let db: TestDatabase;
    const stores: Store[] = [];
    const retries: string[] = [];
    let projects: Project[];

    before(async function () {
      db = await freshPg();
      await db.store.migrateLatest();
      projects = [];
      for (const name of ['p1', 'p2']) {
        const project = await createProject({ store: db.store, clock: systemClock }, { name, approved: true });
        const now = Date.now();
        await db.store.knex('domains').insert({
          id: `dom_${name}${now.toString(36).padStart(24, '0')}`,
          project_id: project.id,
          name: `${name}.example.test`,
          status: 'verified',
          dkim_token: `tok${name}${now}`,
          active_selector: 'ph1',
          created_at: now,
          updated_at: now,
        });
        projects.push(project);
      }
      for (let i = 0; i < 2; i++) stores.push(openStore({ ...db.options, onRetry: (reason) => retries.push(reason) }));
    });
    after(async function () {
      await Promise.all(stores.map((s) => s.close()));
      await db.drop();
    });

    const send = (project: Project, i: number): AcceptRequest => ({
      project,
      environment: 'live',
      prepared: prepareEmail(
        { from: `a@${project.name}.example.test`, to: [`r${i}@x.example.test`], subject: 's', text: 't' },
        Date.now(),
      ),
      attachments: [],
      requestId: `req_${project.name}_${i}`,
      idempotency: null,
    });

    it('accepts every send, and no transaction is run again for a deadlock', async function () {
      const [a, b] = stores.map(
        (store) =>
          new AcceptQueue(store, systemClock, silentLogger(), {
            hostname: 'mta.test',
            routeOf: () => '',
            writer: new GroupCommit(store),
          }),
      );
      const [p1, p2] = projects;
      let accepted = 0;
      for (let round = 0; round < 40; round++) {
        // submitted in one tick: each queue stores its two as one batch
        const answers = await Promise.all([
          a.submit(send(p1, round)),
          a.submit(send(p2, round)),
          b.submit(send(p2, round + 1000)),
          b.submit(send(p1, round + 1000)),
        ]);
        accepted += answers.filter((x) => typeof x.email?.id === 'string').length;
      }
      expect(accepted).to.equal(160);
      expect(retries).to.deep.equal([]);
      const counted = await db.store.knex('usage_counters').sum({ n: 'count' }).first();
      // each send counts in its project's day and month
      expect(Number(counted?.n)).to.equal(2 * 160);
    });
  });
}
