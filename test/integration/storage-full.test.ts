import Database from 'better-sqlite3';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ApiError } from '../../src/lib/errors.js';
import { healthService } from '../../src/modules/operations/health/health.service.js';
import { silentLogger } from '../../src/log/logger.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { writeMeta } from '../../src/store/meta.js';
import { QUIET_MS } from '../../src/store/storage-state.js';
import type { Store } from '../../src/store/store.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { eachDatabase, type DatabaseKind } from '../helpers/databases.js';
import { client, type Client, type Reply } from '../helpers/http.js';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { waitFor } from '../helpers/wait.js';

// Issue 38: a full disk is a pause, not an error. While the database cannot write, every write
// answers 503 storage_full with Retry-After (SMTP 452 4.3.1), /readyz says not ready, the log says so
// once a minute; writes resume by themselves once there is room, and nothing acknowledged is lost.

const SIM = 'simulator.posthorn.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An email with an attachment of `kib` KiB (stored as it is: every send takes that much more room). */
const bigSend = (i: number, kib: number) => ({
  from: 'a@example.test',
  to: [`delivered@${SIM}`],
  subject: `fill ${i}`,
  text: 'x',
  attachments: [
    {
      filename: `fill-${i}.txt`,
      content: Buffer.alloc(kib * 1024, `${i % 10}`).toString('base64'),
      content_type: 'text/plain',
    },
  ],
});

function expectStorageFull(res: Reply): void {
  const error = expectError(res, 503, 'storage_full');
  expect(error.message).to.match(/storage (is|has been) full/);
  expect(res.headers.get('retry-after'), 'Retry-After').to.match(/^[1-9]\d*$/);
}

/**
 * The database refuses to grow, as on a full disk: SQLite with max_page_count at its size now (a real
 * SQLITE_FULL), PostgreSQL with triggers raising SQLSTATE 53100 disk_full on new emails and meta rows.
 */
async function fill(store: Store, kind: DatabaseKind): Promise<void> {
  if (kind === 'sqlite') {
    const [{ page_count: pages }] = await store.knex.raw<Array<{ page_count: number }>>('PRAGMA page_count');
    await store.knex.raw(`PRAGMA max_page_count = ${pages}`);
    return;
  }
  await store.knex.raw(
    `CREATE FUNCTION disk_is_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`,
  );
  for (const table of ['emails', 'meta'])
    await store.knex.raw(
      `CREATE TRIGGER disk_is_full BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION disk_is_full()`,
    );
}

async function free(store: Store, kind: DatabaseKind): Promise<void> {
  if (kind === 'sqlite') await store.knex.raw('PRAGMA max_page_count = 1073741823');
  else
    await store.knex.raw(
      'DROP TRIGGER disk_is_full ON emails; DROP TRIGGER disk_is_full ON meta; DROP FUNCTION disk_is_full()',
    );
}

eachDatabase(
  'a full database is a pause, in one process (SQLite: SQLITE_FULL; PostgreSQL: SQLSTATE 53100)',
  (db, kind) => {
    let api: TestApi;
    let t: Tenant;
    before(async function () {
      api = await startTestApi(db().store);
      t = await api.tenant();
    });
    after(async function () {
      await api.stop();
    });

    it('answers 503 storage_full with Retry-After, /readyz 503, and takes mail again once there is room, on the same connection', async function () {
      this.timeout(30_000);
      const before = await t.api.post('/v1/emails', bigSend(0, 256));
      expect(before.status, before.text).to.equal(202);
      await fill(db().store, kind);
      try {
        for (let i = 1; i <= 3; i++) expectStorageFull(await t.api.post('/v1/emails', bigSend(i, 256)));
        const ready = await api.anonymous.get('/readyz');
        expectStorageFull(ready);
        expect(ready.body.error.message).to.match(/^not ready: .*full since \d{4}-\d\d-\d\dT/);
        expect((await t.api.get(`/v1/emails/${before.body.id}`)).status, 'reads go on').to.equal(200);
      } finally {
        await free(db().store, kind);
      }
      const after = await t.api.post('/v1/emails', bigSend(4, 256));
      expect(after.status, after.text).to.equal(202);
      // within QUIET_MS of the last refusal a write that fits does not yet count as "writable again"
      expectStorageFull(await api.anonymous.get('/readyz'));
      await sleep(QUIET_MS);
      const ready = await api.anonymous.get('/readyz');
      expect(ready.status, ready.text).to.equal(200);
    });

    it("the group commit's jobs hear storage_full, never the database's own error, and readiness follows", async function () {
      this.timeout(30_000);
      const { store } = db();
      const writer = new GroupCommit(store);
      const health = healthService(store, silentLogger());
      await fill(store, kind);
      try {
        const big = (n: number) => writer.run((trx) => writeMeta(trx, `full-${n}`, MIB_OF_TEXT));
        const settled = await Promise.allSettled([big(1), big(2), big(3)]);
        const reasons = settled.map((s) => (s.status === 'rejected' ? s.reason : null));
        expect(
          reasons.every((r) => r instanceof ApiError && r.code === 'storage_full'),
          String(reasons),
        ).to.equal(true);
        expect(store.storage.fullSince()).to.be.a('number');
        const refusal = await health.ready().then(
          () => null,
          (e: unknown) => e,
        );
        expect(refusal).to.be.instanceOf(ApiError).and.include({ code: 'storage_full', status: 503 });
      } finally {
        await free(store, kind);
      }
      await writer.run((trx) => writeMeta(trx, 'full-4', MIB_OF_TEXT));
      await sleep(QUIET_MS);
      // no write since: readiness looks for room itself (free space on SQLite, a small write on PostgreSQL)
      await health.ready();
      expect(store.storage.fullSince()).to.equal(null);
    });
  },
);

/** More than the database may grow by while "full". */
const MIB_OF_TEXT = 'y'.repeat(1024 * 1024);

// ---------------------------------------------------------------------------------------------
// posthorn serve with data_dir on a small tmpfs, filled by sends, then grown without a restart.
// It needs to mount a file system (root, as on CI). Where that is impossible it fails, saying so,
// rather than pass without having run: POSTHORN_TEST_NO_MOUNT=1 leaves it out, and says that too.

const NO_MOUNT = process.env.POSTHORN_TEST_NO_MOUNT;
const LEFT_OUT = 'posthorn serve on a full tmpfs not run: POSTHORN_TEST_NO_MOUNT is set';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    const why = String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim();
    const who = process.getuid?.() === 0 ? 'as root' : `as uid ${process.getuid?.()}, not root`;
    throw new Error(
      `cannot mount a tmpfs for data_dir (${who}): ${why}\nThis test needs mount -t tmpfs (root with CAP_SYS_ADMIN, as on CI); set POSTHORN_TEST_NO_MOUNT=1 to leave it out on a machine that cannot.`,
      { cause: e },
    );
  }
}

/** The stopped serve's files may take a moment to be let go of; a lazy unmount if they are not. */
async function unmount(dir: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      return;
    } catch {
      await sleep(250);
    }
  }
  execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
}

const logLines = (app: ServeProcess) =>
  app
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string } });

if (NO_MOUNT) {
  after(function () {
    console.log(`\n  ${LEFT_OUT}`);
  });
} else {
  describe('a full disk is a pause: posthorn serve with data_dir on a small tmpfs', function () {
    this.timeout(120_000);
    let data: string;
    let mounted = false;
    let app: ServeProcess | null = null;
    let api: Client;
    let key: string;
    let configPath: string;
    let submissionPort: number;
    const accepted: string[] = [];
    /** when the filling began: the error line says it at most once a minute from then */
    let fullAt = 0;

    before(async function () {
      submissionPort = await freePort();
      const loopback = { host: '127.0.0.1', port: 0 };
      // dns.resolvers: a closed local port, so that posthorn doctor's DNS checks fail at once
      const written = writeConfig({
        limits: { requests_per_second: 100_000 },
        smtp: { inbound: loopback, submission: { host: '127.0.0.1', port: submissionPort } },
        dns: { resolvers: [`127.0.0.1:${await freePort()}`] },
      });
      configPath = written.path;
      data = join(written.dir, 'data');
      mountTmpfs(data, '16m');
      mounted = true;
      app = await startServe(configPath);
      key = app.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
      api = client(app.baseUrl, key);
    });

    after(async function () {
      await app?.stop();
      if (mounted) await unmount(data);
    });

    it('fills: 202 until the disk is full, then 503 storage_full with Retry-After; what was acknowledged stays readable', async function () {
      let refused: Reply | null = null;
      fullAt = Date.now();
      for (let i = 0; i < 400 && !refused; i++) {
        const res = await api.post('/v1/emails', bigSend(i, 256));
        if (res.status === 202) accepted.push(res.body.id as string);
        else refused = res;
      }
      expect(refused, 'a send refused before 400 of 256 KiB on 16 MB').to.not.equal(null);
      expectStorageFull(refused!);
      expect(accepted.length, 'sends acknowledged before the disk filled').to.be.greaterThan(10);
      // more sends while full: each refused the same way, never a 500
      for (let i = 0; i < 5; i++) expectStorageFull(await api.post('/v1/emails', bigSend(1000 + i, 256)));
      const missing = [];
      for (const id of accepted) {
        const res = await api.get(`/v1/emails/${id}`);
        if (res.status !== 200) missing.push(`${id}: ${res.status}`);
      }
      expect(missing, 'acknowledged and not readable').to.deep.equal([]);
    });

    it('says so while full: /readyz 503, SMTP submission 452 4.3.1, one error log line, posthorn doctor fails the disk check', async function () {
      const ready = await client(app!.baseUrl).get('/readyz');
      expectStorageFull(ready);
      expect(ready.body.error.message).to.match(/^not ready: /);
      // bigger than the HTTP sends that failed: it cannot fit in what they left behind
      const raw = `From: a@example.test\r\nTo: delivered@${SIM}\r\nSubject: full\r\n\r\n${'z'.repeat(76).concat('\r\n').repeat(8000)}`;
      const smtp = await smtpSend(submissionPort, {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        raw,
        auth: { user: 'app', pass: key },
      });
      expect(smtp.ok, JSON.stringify(smtp)).to.equal(false);
      expect(smtp).to.include({ code: 452 });
      expect((smtp as { response: string }).response).to.include('4.3.1');
      const lines = logLines(app!);
      const full = lines.filter((l) => /storage is full/.test(l.msg));
      expect(full.length, 'error lines saying the storage is full: one a minute').to.be.within(
        1,
        1 + Math.floor((Date.now() - fullAt) / 60_000),
      );
      expect(full[0].level).to.equal(50);
      expect(
        lines.filter((l) => l.level >= 50 && l.msg === 'request failed'),
        'per-request error lines',
      ).to.deep.equal([]);
      const doctor = await runCli(['doctor', '--json', '--config', configPath]);
      const disk = (doctor.json.checks as Array<{ name: string; status: string; message: string }>).find(
        (c) => c.name === 'disk',
      )!;
      expect(disk.status, disk.message).to.equal('fail');
      expect(disk.message).to.match(/writes have failed for lack of space since/);
    });

    it('resumes by itself within seconds once the file system grows, without a restart', async function () {
      execFileSync('mount', ['-o', 'remount,size=1g', data], { stdio: 'pipe' });
      const resumedAt = Date.now();
      let sent: Reply | null = null;
      await waitFor(
        async () => {
          sent = await api.post('/v1/emails', bigSend(2000, 256));
          return sent.status === 202;
        },
        10_000,
        'a send accepted again',
      );
      accepted.push(sent!.body.id as string);
      await waitFor(
        async () => (await client(app!.baseUrl).get('/readyz')).status === 200,
        10_000,
        '/readyz 200 again',
      );
      expect(Date.now() - resumedAt).to.be.lessThan(12_000);
      const smtp = await smtpSend(submissionPort, {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        raw: `From: a@example.test\r\nTo: delivered@${SIM}\r\nSubject: again\r\n\r\nok\r\n`,
        auth: { user: 'app', pass: key },
      });
      expect(smtp.ok, JSON.stringify(smtp)).to.equal(true);
      expect(logLines(app!).some((l) => l.msg === 'the storage takes writes again')).to.equal(true);
      expect(app!.child.exitCode, 'the same process').to.equal(null);
      for (const id of accepted) expect((await api.get(`/v1/emails/${id}`)).status, id).to.equal(200);
      const doctor = await runCli(['doctor', '--json', '--config', configPath]);
      const disk = (doctor.json.checks as Array<{ name: string; status: string; message: string }>).find(
        (c) => c.name === 'disk',
      )!;
      expect(disk.message).to.not.match(/lack of space/);
      expect(disk.status, disk.message).to.not.equal('fail');
    });

    it('leaves a whole database: integrity ok after a stop, and every acknowledged email there after the restart', async function () {
      expect(await app!.stop()).to.equal(0);
      const file = new Database(join(data, 'posthorn.sqlite'));
      try {
        expect(file.pragma('integrity_check', { simple: true })).to.equal('ok');
      } finally {
        file.close();
      }
      app = await startServe(configPath);
      api = client(app.baseUrl, key);
      for (const id of accepted) expect((await api.get(`/v1/emails/${id}`)).status, id).to.equal(200);
    });
  });
}
