import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { buildConfig, loadConfig } from '../../src/config/load.js';
import { type Config } from '../../src/config/config.js';
import { buildCore, type Core } from '../../src/core.js';
import { AuthThrottle } from '../../src/lib/auth-throttle.js';
import { RateLimiter } from '../../src/lib/rate-limiter.js';
import { isLoopbackAddress, selfSignedFiles } from '../../src/lib/self-signed.js';
import { systemClock } from '../../src/lib/time.js';
import { startRoles, type RunningRoles } from '../../src/start-roles.js';
import { readTlsFacts } from '../../src/modules/operations/doctor/probes.js';
import { judgeTls } from '../../src/modules/operations/doctor/machine-verdicts.js';
import { createKey } from '../../src/modules/account/keys/keys.service.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { isLoopback } from '../../src/smtp/listener.js';
import { startSubmissionListener } from '../../src/smtp/submission.js';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startLiveWorld, type LiveWorld } from '../helpers/live.js';
import { listenerOptionsFor, RawSmtp } from '../helpers/smtp-raw.js';
import { tempDir } from '../helpers/temp-dir.js';

const HOST = 'mta.selfsigned.test';
const authPlain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`;
/** nodemailer's check of a listener: connect, STARTTLS or implicit TLS, AUTH; true when all went through */
const verify = (port: number, key: string, tls: { secure: boolean }) =>
  nodemailer
    .createTransport({
      host: '127.0.0.1',
      port,
      secure: tls.secure,
      ...(tls.secure ? {} : { requireTLS: true }),
      tls: { rejectUnauthorized: false },
      auth: { user: 'app', pass: key },
      logger: false,
    })
    .verify();

describe('secure defaults of the SMTP listeners (issue 38)', function () {
  this.timeout(30_000);

  it('config/default.yaml binds both listeners to 127.0.0.1', function () {
    const c = loadConfig({ env: {} });
    expect([c.smtp.inbound.host, c.smtp.submission.host]).to.deep.equal(['127.0.0.1', '127.0.0.1']);
  });

  it('takes loopback for loopback, bind addresses and clients alike, and nothing else', function () {
    for (const a of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1', 'localhost'])
      expect(isLoopbackAddress(a), a).to.equal(true);
    for (const a of ['0.0.0.0', '::', '192.0.2.2', '::ffff:192.0.2.2', '2001:db8::1', 'mail.example.com'])
      expect(isLoopbackAddress(a), a).to.equal(false);
    for (const a of ['127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a), a).to.equal(true);
    for (const a of ['192.0.2.2', '::ffff:192.0.2.2', 'fd00::2']) expect(isLoopback(a), a).to.equal(false);
  });

  context('when a listener faces the network and smtp.tls is not set', function () {
    let db: TestDatabase;
    let dataDir: string;
    let config: Config;
    let key: string;
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    /** `posthorn serve`'s start of the submission role, on 0.0.0.0 */
    const serve = async (): Promise<{ running: RunningRoles; core: Core }> => {
      const core = buildCore(config, db.store, logger);
      return { running: await startRoles(config, core, { submission: true }, { host: '127.0.0.1', port: 0 }), core };
    };
    const selfSignedWarnings = () => lines.filter((l) => l.level === 40 && String(l.msg).includes('self-signed'));

    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      dataDir = tempDir('posthorn-selfsigned-');
      config = buildConfig(
        {
          data_dir: dataDir,
          log: { level: 'silent' },
          outbound: { hostname: HOST },
          smtp: { inbound: { enabled: false }, submission: { host: '0.0.0.0', port: 0 } },
        },
        null,
      );
      const deps = { store: db.store, clock: systemClock };
      const project = await createProject(deps, { name: 'self-signed', approved: true });
      key = (await createKey(deps, { projectId: project.id, mode: 'test' })).secret;
    });
    after(async function () {
      await db.drop();
    });

    it('makes a self-signed certificate for outbound.hostname in data_dir/tls at the first start (key 0600), says so at warn, and reuses it after', async function () {
      const files = selfSignedFiles(dataDir);
      const first = await serve();
      await first.running.stop();
      expect(statSync(files.key).mode & 0o777).to.equal(0o600);
      const made = readFileSync(files.cert);
      expect(new X509Certificate(made).checkHost(HOST)).to.equal(HOST);
      expect(selfSignedWarnings().map((l) => l.created)).to.deep.equal([true]);
      expect(String(selfSignedWarnings()[0].msg)).to.include('clients must be told to trust it, or set smtp.tls');

      const second = await serve();
      await second.running.stop();
      expect(readFileSync(files.cert).equals(made)).to.equal(true);
      expect(selfSignedWarnings().map((l) => l.created)).to.deep.equal([true, false]);
    });

    it('presents it after STARTTLS, over which a client that does not verify it authenticates', async function () {
      const { running } = await serve();
      try {
        const port = running.submissionPort!;
        expect(await verify(port, key, { secure: false })).to.equal(true);
        const s = await RawSmtp.open(port);
        await s.command('EHLO client.test');
        const presented = await s.starttls({ rejectUnauthorized: false });
        expect(presented.fingerprint256).to.equal(
          new X509Certificate(readFileSync(selfSignedFiles(dataDir).cert)).fingerprint256,
        );
        s.destroy();
      } finally {
        await running.stop();
      }
    });

    it('to a client that is not trusted, offers AUTH only once STARTTLS is done', async function () {
      const { running, core } = await serve();
      const { auth, emails } = core.services;
      const sub = await startSubmissionListener(
        listenerOptionsFor({
          name: 'submission',
          hostname: HOST,
          tls: selfSignedFiles(dataDir),
          trustedAddress: () => false,
        }),
        {
          auth,
          emails,
          limiter: new RateLimiter(1000, systemClock),
          throttle: new AuthThrottle({ failuresPerIp: 100, windowMs: 600_000 }, systemClock),
        },
      );
      try {
        const s = await RawSmtp.open(sub.port);
        const before = await s.command('EHLO client.test');
        expect(before).to.include('STARTTLS');
        expect(before).to.not.include('AUTH');
        await s.starttls({ rejectUnauthorized: false });
        expect(await s.command('EHLO client.test')).to.include('AUTH PLAIN LOGIN');
        expect(await s.command(authPlain(key))).to.match(/^235 /);
        s.destroy();
      } finally {
        await sub.close();
        await running.stop();
      }
    });

    it('posthorn doctor warns about it', async function () {
      const facts = await readTlsFacts(config.smtp.tls, HOST, {
        dataDir,
        listeners: [{ name: 'submission', enabled: true, host: '0.0.0.0', secure: false }],
      });
      expect(facts).to.deep.equal({
        kind: 'self_signed',
        listeners: ['submission'],
        certPath: selfSignedFiles(dataDir).cert,
        made: true,
      });
      const verdict = judgeTls(facts, HOST, Date.now());
      expect(verdict.status).to.equal('warn');
      expect(verdict.message).to.include(`presents a self-signed certificate for ${HOST}`);
      expect(verdict.hint).to.include('smtp.tls.cert');
    });
  });

  context('with smtp.submission.secure (implicit TLS, RFC 8314)', function () {
    let w: LiveWorld;
    let key: string;
    before(async function () {
      w = await startLiveWorld(
        'dkim.implicit.test',
        'mta.implicit.test',
        {
          data_dir: tempDir('posthorn-implicit-'),
          smtp: { inbound: { enabled: false }, submission: { host: '127.0.0.1', port: 0, secure: true } },
        },
        { submission: true },
      );
      key = (await w.api.tenant({ mode: 'test' })).key;
    });
    after(async function () {
      await w.stop();
    });

    it('speaks TLS from the first byte, without STARTTLS, and takes AUTH over it', async function () {
      const port = w.api.running.submissionPort!;
      expect(await verify(port, key, { secure: true })).to.equal(true);
      const s = await RawSmtp.open(port, { tls: { rejectUnauthorized: false } });
      expect(s.greeting).to.match(/^220 mta\.implicit\.test ESMTP/);
      const ehlo = await s.command('EHLO client.test');
      expect(ehlo).to.include('AUTH PLAIN LOGIN');
      expect(ehlo).to.not.include('STARTTLS');
      s.destroy();
    });
  });

  context('the name both listeners give', function () {
    let w: LiveWorld;
    before(async function () {
      w = await startLiveWorld(
        'dkim.banner.test',
        'mta.banner.test',
        { smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { host: '127.0.0.1', port: 0 } } },
        { inbound: true, submission: true },
      );
    });
    after(async function () {
      await w.stop();
    });

    it('is outbound.hostname, in the greeting and in the EHLO reply', async function () {
      for (const [name, port] of [
        ['inbound', w.api.running.inboundPort!],
        ['submission', w.api.running.submissionPort!],
      ] as const) {
        const s = await RawSmtp.open(port);
        expect(s.greeting).to.equal(`220 mta.banner.test ESMTP Posthorn ${name}`);
        expect((await s.command('EHLO client.test')).split('\n')[0]).to.equal(
          '250-mta.banner.test Nice to meet you, [127.0.0.1]',
        );
        s.destroy();
      }
    });
  });
});
