import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { purgeIdempotencyKeys } from '../../src/modules/sending/emails/emails.service.js';
import { PG_URL, freshPg } from '../helpers/databases.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { AcceptQueue } from '../../src/modules/sending/emails/accept-batch.js';
import type { AcceptRequest } from '../../src/modules/sending/emails/accept-rules.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { openStore, type Store } from '../../src/store/store.js';

const SIM = 'simulator.posthorn.test';
const base = { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'Hello', text: 'hi' };

eachDatabase('Idempotency-Key (interface §4.1)', (db) => {
  let world: DnsWorld;
  let files: HttpsReceiver;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    world = await startDnsWorld();
    files = await startReceiver();
    world.add('hooks.test', 'A', '127.0.0.1');
    // an attachment server that takes its time: the first request is still running when the second arrives
    files.setBehaviour('/held/', (_req, answer) =>
      setTimeout(() => answer(200, 'a,b\n1,2\n', { 'content-type': 'text/csv' }), 1500),
    );
    api = await startTestApi(db().store, {
      dns: { resolvers: [world.address] },
      network: { allow_private: true },
      webhooks: { ca_file: files.caFile },
    });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await files.stop();
    await world.stop();
  });

  it('answers 409 to a retry that arrives while the first request is still running, then replays the original', async function () {
    const key = `overlap-${Date.now()}`;
    const body = { ...base, attachments: [{ path: files.url('/held/report.csv') }] };
    const first = t.api.post('/v1/emails', body, { 'Idempotency-Key': key });
    await new Promise((r) => setTimeout(r, 400));
    const during = await t.api.post('/v1/emails', body, { 'Idempotency-Key': key });
    expectError(during, 409, 'idempotency_conflict');
    expect(during.body.error.message).to.match(/still being processed/);
    const original = await first;
    expect(original.status, original.text).to.equal(202);
    const after = await t.api.post('/v1/emails', body, { 'Idempotency-Key': key });
    expect(after.status).to.equal(202);
    expect(after.body).to.deep.equal(original.body);
    expect(await api.deps.store.knex('emails').where({ id: original.body.id })).to.have.length(1);
  });

  it('lets a retry take over a claim left running by a request that died', async function () {
    const key = `crashed-${Date.now()}`;
    // what an older version killed between its claim and the commit left behind (this version claims nothing before the commit)
    await api.deps.store.knex('idempotency_keys').insert({
      project_id: t.project.id,
      key,
      request_hash: 'x'.repeat(64),
      state: 'running',
      response_status: null,
      response_body: null,
      created_at: Date.now() - 1000,
    });
    const res = await t.api.post('/v1/emails', base, { 'Idempotency-Key': key });
    expect(res.status, res.text).to.equal(202);
    expect((await t.api.post('/v1/emails', base, { 'Idempotency-Key': key })).body.id).to.equal(res.body.id);
  });

  it('forgets keys older than limits.idempotency_ttl: the same key then sends anew', async function () {
    const key = `old-${Date.now()}`;
    const first = await t.api.post('/v1/emails', base, { 'Idempotency-Key': key });
    expect(first.status).to.equal(202);
    expect(await purgeIdempotencyKeys(api.deps.store, Date.now() + 1)).to.be.at.least(1);
    const again = await t.api.post('/v1/emails', base, { 'Idempotency-Key': key });
    expect(again.status).to.equal(202);
    expect(again.body.id).to.not.equal(first.body.id);
  });
});

// Only PostgreSQL has several processes on one database (SQLite: one serve owns the data directory).
if (PG_URL) {
  describe('Idempotency-Key: two processes racing with one key @pg', function () {
    it("store the email once, and the process that loses the key gives the winner's 202", async function () {
      const db = await freshPg();
      await db.store.migrateLatest();
      // the second process: a pool of its own on the same database
      const other = openStore(db.options);
      try {
        const project = await createProject({ store: db.store, clock: systemClock }, { name: 'race' });
        // the first process's transaction has written the key's answer and stays open until released
        let written!: () => void;
        const wrote = new Promise<void>((r) => (written = r));
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        const slow: Store = {
          ...db.store,
          commit: (fn) =>
            db.store.commit(async (trx) => {
              const value = await fn(trx);
              written();
              await held;
              return value;
            }),
        };
        const logs: string[] = [];
        const logger = createLogger(
          'debug',
          new Writable({ write: (chunk, _enc, done) => (logs.push(String(chunk)), done()) }),
        );
        const queue = (store: Store) =>
          new AcceptQueue(store, systemClock, logger, {
            hostname: 'mta.test',
            routeOf: () => '',
            writer: new GroupCommit(store),
          });
        const request: AcceptRequest = {
          project,
          environment: 'test',
          prepared: prepareEmail({ ...base }, Date.now()),
          attachments: [],
          requestId: 'req_race',
          idempotency: { key: 'race', hash: 'h' },
        };
        const first = queue(slow).submit(request);
        await wrote;
        const second = queue(other).submit({ ...request, requestId: 'req_race_2' });
        // the second's insert of the key now waits on the first's open transaction
        await new Promise((r) => setTimeout(r, 500));
        release();
        const [a, b] = await Promise.all([first, second]);
        expect(a.email?.id).to.be.a('string');
        expect(b.replay?.status).to.equal(202);
        expect(b.replay?.body).to.include({ id: a.email!.id });
        expect(await db.store.knex('emails').where({ project_id: project.id })).to.have.length(1);
        // it was the key's unique index that decided, as the second batch found no answer when it began;
        // a race is an ordinary path: read again, at debug, with no warning or error
        expect(logs.join('')).to.include('answered by another node first');
        expect(logs.filter((l) => /"level":[456]0/.test(l))).to.deep.equal([]);
      } finally {
        await other.close();
        await db.drop();
      }
    });
  });
}
