import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { tempDir } from '../helpers/temp-dir.js';
import { attachmentFetcher } from '../../src/egress-options.js';
import { createResolver } from '../../src/dns/resolver.js';
import { ApiError } from '../../src/lib/errors.js';
import { resolverLookup } from '../../src/net/egress.js';

const SIM = 'simulator.posthorn.test';
const FIELD = 'attachments[1].path';
/** a name the certificate of the self-signed server carries: it must not come back to the client */
const CERT_NAME = 'cert-detail-7f3e.files.test';

const listening = (server: Server | HttpsServer) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
const closing = (server: Server | HttpsServer) => new Promise<void>((resolve) => server.close(() => resolve()));

/** an HTTPS server on loopback whose certificate signs itself (no CA anyone trusts) */
async function selfSignedServer(): Promise<{ server: HttpsServer; port: number }> {
  const dir = tempDir('posthorn-selfsigned-');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '2',
      '-subj',
      `/CN=${CERT_NAME}`,
      '-addext',
      `subjectAltName=DNS:files.hooks.test,DNS:${CERT_NAME}`,
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const server = createHttpsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (_req, res) => res.end('never read'),
  );
  server.on('tlsClientError', () => undefined);
  return { server, port: await listening(server) };
}

// interface §4.1 attachments[].path: a failed download is a 400 validation_error naming the field, whose
// message says why in one word and nothing of the network behind the appliance (addresses, certificates).
describe('attachment downloads that fail', function () {
  this.timeout(30_000);
  let world: DnsWorld;
  let files: HttpsReceiver;
  const servers: Array<Server | HttpsServer> = [];

  before(async function () {
    world = await startDnsWorld();
    files = await startReceiver();
    world.add('files.hooks.test', 'A', '127.0.0.1');
    files.setBehaviour('/huge/', (_req, answer) =>
      answer(200, 'x'.repeat(10_000_001), { 'content-type': 'text/plain' }),
    );
  });
  after(async function () {
    await Promise.all(servers.map((s) => closing(s)));
    await files.stop();
    await world.stop();
  });

  /** a send whose second attachment is downloaded from url */
  const sendWith = (t: Tenant, url: string) =>
    t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [`delivered@${SIM}`],
      subject: 's',
      text: 't',
      attachments: [
        { filename: 'a.txt', content: 'aGk=' },
        { filename: 'b.txt', path: url },
      ],
    });

  const expectWord = async (t: Tenant, url: string, word: string) => {
    const err = expectError(await sendWith(t, url), 400, 'validation_error', FIELD);
    expect(err.message).to.equal(`${FIELD}: could not be downloaded: ${word}`);
  };

  describe('with network.allow_private (the receivers are on loopback)', function () {
    let db: TestDatabase;
    let api: TestApi;
    let t: Tenant;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(db.store, {
        dns: { resolvers: [world.address] },
        network: { allow_private: true },
        webhooks: { ca_file: files.caFile },
      });
      t = await api.tenant();
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    it('status N: the server answered something other than 2xx', async function () {
      await expectWord(t, files.url('/status/404/b.txt', 'files.hooks.test'), 'status 404');
      await expectWord(t, files.url('/status/503/b.txt', 'files.hooks.test'), 'status 503');
      await expectWord(t, files.url('/redirect/b.txt', 'files.hooks.test'), 'status 302');
    });

    it('refused: nothing listens on the port', async function () {
      const probe = createTcpServer();
      const port = await listening(probe);
      await closing(probe);
      await expectWord(t, `https://files.hooks.test:${port}/b.txt`, 'refused');
    });

    it('refused: the server drops the connection at once (reset)', async function () {
      const dropper = createTcpServer((socket) => socket.resetAndDestroy());
      servers.push(dropper);
      const port = await listening(dropper);
      await expectWord(t, `https://files.hooks.test:${port}/b.txt`, 'refused');
    });

    it('tls: a self-signed certificate, whose names do not come back', async function () {
      const { server, port } = await selfSignedServer();
      servers.push(server);
      const err = expectError(
        await sendWith(t, `https://files.hooks.test:${port}/b.txt`),
        400,
        'validation_error',
        FIELD,
      );
      expect(err.message).to.equal(`${FIELD}: could not be downloaded: tls`);
      expect(err.message).to.not.include(CERT_NAME);
    });

    it('tls: a certificate from a CA not trusted (not in webhooks.ca_file)', async function () {
      const other = await startReceiver();
      try {
        await expectWord(t, other.url('/ok/b.txt', 'files.hooks.test'), 'tls');
        expect(other.to('/ok/b.txt')).to.have.length(0);
      } finally {
        await other.stop();
      }
    });

    it('too large: more than the 10 MB the attachments may have in all', async function () {
      await expectWord(t, files.url('/huge/b.txt', 'files.hooks.test'), 'too large');
    });

    it('dns: the host name does not exist', async function () {
      await expectWord(t, files.url('/ok/b.txt', 'nowhere.files.test'), 'dns');
    });

    it('timeout: no answer within the request timeout', async function () {
      // the API's downloads wait 30 s: the same fetcher, with a timeout a test can wait for
      const fetch = attachmentFetcher({
        allowPrivate: true,
        resolve: resolverLookup(createResolver({ servers: [world.address] })),
        ca: files.caPem,
        timeoutMs: 300,
      });
      const err = await fetch(files.url('/delay/5000/b.txt', 'files.hooks.test'), FIELD, 10_000_000).catch(
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ApiError);
      expect(err).to.include({
        status: 400,
        code: 'validation_error',
        field: FIELD,
        message: `${FIELD}: could not be downloaded: timeout`,
      });
    });
  });

  describe('without network.allow_private', function () {
    let db: TestDatabase;
    let api: TestApi;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(db.store, {
        dns: { resolvers: [world.address] },
        network: { allow_private: false },
        webhooks: { ca_file: files.caFile },
      });
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    it('blocked: the host resolves to a loopback address, which the message does not name', async function () {
      const t = await api.tenant();
      const path = `/ok/blocked-${Date.now()}.txt`;
      await expectWord(t, files.url(path, 'files.hooks.test'), 'blocked');
      await expectWord(t, `https://127.0.0.1:${files.port}${path}`, 'blocked');
      await expectWord(t, `https://localhost:${files.port}${path}`, 'blocked');
      expect(files.to(path)).to.have.length(0);
    });
  });
});
