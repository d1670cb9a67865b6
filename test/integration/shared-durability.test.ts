import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { sqliteFile } from '../../src/store/sqlite.js';
import { SharedDurability, WalSyncThread } from '../../src/store/shared-durability.js';
import { MessageChannel } from 'node:worker_threads';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { ApiError } from '../../src/lib/errors.js';
import { AcceptQueue } from '../../src/modules/sending/emails/accept-batch.js';
import type { AcceptRequest } from '../../src/modules/sending/emails/accept-rules.js';
import { emailOf } from '../helpers/accept.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { findProjectByName } from '../../src/modules/account/projects/projects.repo.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import {
  fromWire,
  outcomeOf,
  RemoteAcceptor,
  storeForRelay,
  toWire,
  type AcceptOutcome,
} from '../../src/roles/accept-relay.js';

/**
 * The fsync thread of `serve` (shared-durability.ts): the API thread and the
 * background thread each hold one link. Both links live on this thread here;
 * across threads they are the same shared counters and ports.
 */
describe('one fsync thread for the stores of a process', function () {
  let syncer: WalSyncThread | null = null;
  let links: SharedDurability[] = [];
  let db: TestDatabase | null = null;

  function start(walPath: (dataDir: string) => string): {
    store: TestDatabase['store'];
    mine: SharedDurability;
    other: SharedDurability;
  } {
    db = freshSqlite((dir) => {
      syncer = new WalSyncThread(walPath(dir), 2);
      links = syncer.links.map((l) => new SharedDurability(l));
      return { durability: links[0] };
    });
    return { store: db.store, mine: links[0], other: links[1] };
  }

  afterEach(async function () {
    await db?.store.close();
    await syncer?.stop();
    for (const l of links) await l.close();
    await db?.drop();
    [syncer, links, db] = [null, [], null];
  });

  it('numbers every commit, and tells any thread when one is on disk', async function () {
    const { store, other } = start((dir) => `${sqliteFile(dir)}-wal`);
    await store.migrateLatest();
    const first = await store.commit((trx) => trx('meta').insert({ key: 'a', value: '1' }));
    const second = await store.commit((trx) => trx('meta').insert({ key: 'b', value: '2' }));
    expect(first.seq).to.be.a('bigint');
    expect(second.seq! > first.seq!).to.equal(true);
    await second.durable;
    await other.whenDurable(first.seq!);
    // the other thread waits for a number it was sent: not before that commit is made and synced
    let heard = false;
    const next = other.whenDurable(second.seq! + 1n).then(() => (heard = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).to.equal(false);
    const third = await store.commit((trx) => trx('meta').insert({ key: 'c', value: '3' }));
    expect(third.seq).to.equal(second.seq! + 1n);
    await next;
    expect(heard).to.equal(true);
    expect(await store.tx((trx) => trx('meta').whereIn('key', ['a', 'b', 'c']).pluck('value'))).to.have.members([
      '1',
      '2',
      '3',
    ]);
  });

  it('reports nothing durable, on any thread, once an fsync has failed', async function () {
    // fsync(2) on /dev/null fails with EINVAL: a disk that refuses the sync
    const { store, other } = start(() => '/dev/null');
    const failure = (await store.migrateLatest().catch((e: unknown) => e)) as Error;
    expect(failure).to.be.instanceOf(Error);
    expect(failure.message).to.match(/fsync of the WAL failed \(EINVAL/);
    // later commits are stored but never called durable: the failed sync may have lost earlier frames
    const later = await store.commit((trx) => trx('meta').insert({ key: 'c', value: '3' }));
    expect(((await later.durable.catch((e: unknown) => e)) as Error).message).to.match(/fsync of the WAL failed/);
    expect(((await other.whenDurable(later.seq!).catch((e: unknown) => e)) as Error).message).to.match(
      /fsync of the WAL failed/,
    );
  });

  it('syncs what was counted before it stops, and a wait after it stopped fails instead of hanging', async function () {
    const { store, mine, other } = start((dir) => `${sqliteFile(dir)}-wal`);
    await store.migrateLatest();
    const last = await store.commit((trx) => trx('meta').insert({ key: 'd', value: '4' }));
    const waiting = other.whenDurable(last.seq!);
    await syncer!.stop();
    await waiting;
    const after = mine.committed();
    expect(((await other.whenDurable(after).catch((e: unknown) => e)) as Error).message).to.match(
      /stopped before the commit was known to be on disk/,
    );
  });

  it('across threads (serve): a stored email is answered once its commit is on disk, a refusal at once', async function () {
    const { store, other } = start((dir) => `${sqliteFile(dir)}-wal`);
    await store.migrateLatest();
    const queue = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
    });
    const project = await createProject({ store, clock: systemClock }, { name: 'relay' });
    await addSuppression(store.knex, {
      projectId: project.id,
      address: 'gone@example.test',
      reason: 'bounce',
      emailId: null,
      createdAt: Date.now(),
    });
    const request = (to: string): AcceptRequest => ({
      project,
      environment: 'test',
      prepared: prepareEmail({ from: 'a@example.test', to: [to], subject: 's', text: 't' }, Date.now()),
      attachments: [],
      requestId: 'req_1',
      idempotency: null,
    });
    // the background thread's side sends the outcomes at COMMIT; the API thread's side waits on its
    // own link, here held back until the test lets it go
    const { port1, port2 } = new MessageChannel();
    const before = await store.commit(async () => undefined);
    const asked: bigint[] = [];
    const sent: Array<bigint | null> = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const remote = new RemoteAcceptor(
      (id, requests) => port1.postMessage({ id, requests }),
      (seq) => {
        asked.push(seq);
        return held.then(() => other.whenDurable(seq));
      },
    );
    port2.on('message', (m: { id: number; requests: AcceptRequest[] }) => {
      void Promise.allSettled(m.requests.map((r) => storeForRelay(queue, fromWire(r)))).then((s) => {
        const outcomes = s.map(outcomeOf);
        for (const o of outcomes) if (o.ok) sent.push(o.seq);
        port2.postMessage({ id: m.id, outcomes });
      });
    });
    port1.on('message', (m: { id: number; outcomes: AcceptOutcome[] }) => remote.answered(m.id, m.outcomes));
    try {
      let answered = false;
      const stored = emailOf(remote.submit(toWire(request('someone@example.test')))).then(
        (e) => ((answered = true), e),
      );
      const refused = (await remote.submit(request('gone@example.test')).catch((e: unknown) => e)) as ApiError;
      expect(refused).to.be.instanceOf(ApiError);
      expect(refused).to.include({ status: 422, code: 'recipient_suppressed' });
      // committed and numbered, but not answered while its number is not known to be durable
      while (!asked.length) await new Promise((r) => setTimeout(r, 5));
      expect(await store.knex('emails').where({ project_id: project.id })).to.have.length(1);
      await new Promise((r) => setTimeout(r, 50));
      expect(answered).to.equal(false);
      release();
      const email = await stored;
      expect(email.status).to.equal('queued');
      // the API side waited for the number of the commit that stored it: a later one than any before
      expect(asked).to.deep.equal(sent);
      expect(asked[0] > before.seq!).to.equal(true);
    } finally {
      port1.close();
    }
  });

  it('across threads (serve): an email whose commit cannot be made durable is answered 500, and is stored once', async function () {
    // fsync(2) on /dev/null fails with EINVAL: the disk refuses every sync after its commit
    const { store, mine } = start(() => '/dev/null');
    await store.migrateLatest().catch(() => undefined);
    // committed, though never reported durable
    await createProject({ store, clock: systemClock }, { name: 'nodisk' }).catch(() => undefined);
    const project = (await findProjectByName(store.knex, 'nodisk'))!;
    const queue = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
    });
    const { port1, port2 } = new MessageChannel();
    const remote = new RemoteAcceptor(
      (id, requests) => port1.postMessage({ id, requests }),
      (seq) => mine.whenDurable(seq),
    );
    port2.on('message', (m: { id: number; requests: AcceptRequest[] }) => {
      void Promise.allSettled(m.requests.map((r) => storeForRelay(queue, fromWire(r)))).then((s) =>
        port2.postMessage({ id: m.id, outcomes: s.map(outcomeOf) }),
      );
    });
    port1.on('message', (m: { id: number; outcomes: AcceptOutcome[] }) => remote.answered(m.id, m.outcomes));
    try {
      const request: AcceptRequest = {
        project,
        environment: 'test',
        prepared: prepareEmail({ from: 'a@example.test', to: ['b@example.test'], subject: 's', text: 't' }, Date.now()),
        attachments: [],
        requestId: 'req_1',
        idempotency: null,
      };
      const refused = (await remote.submit(request).catch((e: unknown) => e)) as ApiError;
      expect(refused).to.be.instanceOf(ApiError);
      expect(refused).to.include({ status: 500, code: 'internal_error' });
      expect(refused.message).to.include('could not be stored durably');
      // the commit happened once: a retry by the client is a new email, never this one stored twice
      expect(await store.knex('emails').where({ project_id: project.id })).to.have.length(1);
    } finally {
      port1.close();
    }
  });
});
