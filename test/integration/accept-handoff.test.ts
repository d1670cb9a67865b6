import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { AcceptQueue } from '../../src/modules/sending/emails/accept-batch.js';
import type { AcceptRequest } from '../../src/modules/sending/emails/accept-rules.js';
import { emailOf } from '../helpers/accept.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { findEmailById } from '../../src/modules/sending/emails/emails.repo.js';
import type { Email } from '../../src/modules/sending/emails/email.js';
import { workerHandoff } from '../../src/mta/handoff.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import type { Project } from '../../src/modules/account/projects/projects.repo.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import type { Store } from '../../src/store/store.js';
import { QueueWorker } from '../../src/mta/worker.js';
import type { Attempt } from '../../src/mta/attempt.js';

const DOMAIN = 'handoff.example.test';

/**
 * The accept claims live mail due now for the worker of its thread, in the
 * transaction that stores it, and hands it over once that commit is durable.
 * The worker here runs a recorded attempt in place of SMTP.
 */
eachDatabase('the accept hands live mail due now to the queue worker', (db) => {
  let project: Project;
  let workers: QueueWorker[] = [];

  before(async function () {
    const { store } = db();
    project = await createProject({ store, clock: systemClock }, { name: `handoff-${Date.now()}`, approved: true });
    const now = Date.now();
    await store.knex('domains').insert({
      id: `dom_${now.toString(36).padStart(26, '0')}`,
      project_id: project.id,
      name: DOMAIN,
      status: 'verified',
      dkim_token: `tok${now}`,
      active_selector: 'ph1',
      created_at: now,
      updated_at: now,
    });
  });
  afterEach(async function () {
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
  });

  const live = (i: number, extra: Record<string, unknown> = {}): AcceptRequest => ({
    project,
    environment: 'live',
    prepared: prepareEmail(
      {
        from: `orders@${DOMAIN}`,
        to: [`r${i}@a.example.test`, `s${i}@b.example.test`],
        subject: `s${i}`,
        text: 't',
        ...extra,
      },
      Date.now(),
    ),
    attachments: [],
    requestId: `req_${i}`,
    idempotency: null,
  });

  /** A worker whose attempts are recorded and delivered at once. It never looks at the queue by itself (idle a minute, nobody wakes it) unless an attempt ends. */
  async function worker(
    store: Store,
    concurrency: number,
  ): Promise<{ worker: QueueWorker; attempts: Array<{ email: string; attempt: number }> }> {
    const attempts: Array<{ email: string; attempt: number }> = [];
    const attempt: Attempt = async (email, delivery, recipients, hooks) => {
      attempts.push({ email: email.id, attempt: delivery.attempts });
      await hooks.beforeData();
      return {
        outcomes: new Map(recipients.map((r) => [r.id, { kind: 'delivered' as const, reply: '250 ok', mx: 'sink' }])),
        providerMessageId: email.messageId,
      };
    };
    const w = new QueueWorker({
      store,
      writer: new GroupCommit(store),
      clock: systemClock,
      logger: silentLogger(),
      owner: `test-${Date.now()}`,
      attempt,
      retryDelaysMs: () => [1000],
      concurrency,
      idleMs: 60_000,
    });
    await w.start();
    workers.push(w);
    // its first look found the queue empty; now it sleeps
    await new Promise((r) => setTimeout(r, 100));
    return { worker: w, attempts };
  }

  async function settled(store: Store, ids: string[], ms = 10_000): Promise<Email[]> {
    const end = Date.now() + ms;
    for (;;) {
      const emails = await Promise.all(ids.map((id) => findEmailById(store.knex, id)));
      if (emails.every((e) => e?.status === 'accepted')) return emails as Email[];
      if (Date.now() > end) throw new Error(`not all delivered: ${emails.map((e) => e?.status).join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('answers queued, stores the email claimed by the worker, and it goes out once per recipient domain', async function () {
    const { store } = db();
    const { worker: w, attempts } = await worker(store, 50);
    const accept = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: (_e, a) => a.slice(a.indexOf('@') + 1),
      writer: new GroupCommit(store),
      handoff: () => workerHandoff(w),
    });
    const email = await emailOf(accept.submit(live(1)));
    // the 202 shows what was accepted
    expect(email).to.include({ status: 'queued', attempts: 0 });
    // nothing woke the worker: what goes out went with the commit
    const [done] = await settled(store, [email.id]);
    expect(done.attempts).to.equal(1);
    expect(done.recipients.map((r) => r.status)).to.deep.equal(['delivered', 'delivered']);
    // one attempt per queue row (two recipient domains), each the first
    expect(attempts.filter((a) => a.email === email.id).map((a) => a.attempt)).to.deep.equal([1, 1]);
  });

  it('a burst larger than the worker has room for: the rest waits in the queue, and every email goes out once', async function () {
    const { store } = db();
    const { worker: w, attempts } = await worker(store, 3);
    const accept = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: (_e, a) => a.slice(a.indexOf('@') + 1),
      writer: new GroupCommit(store),
      handoff: () => workerHandoff(w),
    });
    // one turn of the event loop: one batch, 40 queue rows for a worker with room for 3
    const emails = await Promise.all(Array.from({ length: 20 }, (_, i) => emailOf(accept.submit(live(100 + i)))));
    await settled(
      store,
      emails.map((e) => e.id),
    );
    for (const e of emails)
      expect(
        attempts.filter((a) => a.email === e.id).map((a) => a.attempt),
        e.id,
      ).to.deep.equal([1, 1]);
  });

  it('scheduled and test mail are not claimed at the accept', async function () {
    const { store } = db();
    const { worker: w } = await worker(store, 50);
    const accept = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
      handoff: () => workerHandoff(w),
      testDomain: 'simulator.posthorn.test',
    });
    const later = await emailOf(
      accept.submit(live(200, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() })),
    );
    expect((await findEmailById(store.knex, later.id))!.status).to.equal('scheduled');
    expect(
      await store.knex('outbound_queue').where({ email_id: later.id }).first('state', 'lease_owner'),
    ).to.deep.equal({ state: 'queued', lease_owner: null });
  });

  it('a commit that was not made durable hands nothing over: the worker gets its room back, and recovery sends the email once', async function () {
    const { store } = db();
    const { worker: w, attempts } = await worker(store, 1);
    // the disk refuses the fsync after the commit
    const failingDisk: Store = {
      ...store,
      commit: async (fn) => ({
        value: (await store.commit(fn)).value,
        durable: Promise.reject(new Error('EIO: fsync failed')),
        seq: null,
      }),
    };
    const lost = new AcceptQueue(failingDisk, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(failingDisk),
      handoff: () => workerHandoff(w),
    });
    const refused = await emailOf(lost.submit(live(300))).catch((e: unknown) => e);
    expect(refused).to.include({ status: 500, code: 'internal_error' });
    const [stored] = await store
      .knex('emails')
      .where({ project_id: project.id, request_id: 'req_300' })
      .select<Array<{ id: string }>>('id');
    // committed, claimed for the worker, but nothing of it went out
    expect(
      await store.knex('outbound_queue').where({ email_id: stored.id }).first('state', 'data_started'),
    ).to.deep.include({ state: 'submitting' });
    await new Promise((r) => setTimeout(r, 200));
    expect(attempts.filter((a) => a.email === stored.id)).to.have.length(0);
    // its one slot is free again: the next email goes out
    const ok = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
      handoff: () => workerHandoff(w),
    });
    const next = await emailOf(ok.submit(live(301)));
    await settled(store, [next.id]);
    // what a restart does: the row provably never reached DATA, so it is sent, once
    await w.recover(true);
    w.wake();
    await settled(store, [stored.id]);
    expect(attempts.filter((a) => a.email === stored.id).map((a) => a.attempt)).to.deep.equal([2]);
  });
});
