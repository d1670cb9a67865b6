import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { checkUrl, guardedRequest, requestChecked, resolverLookup } from '../../src/net/egress.js';
import { createResolver } from '../../src/dns/resolver.js';
import { readFileSync } from 'node:fs';

const SIM = 'simulator.posthorn.test';

describe('the SSRF guard with network.allow_private: false', function () {
  let db: TestDatabase;
  let world: DnsWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;
  let t: Tenant;
  const private_ = [
    ['loopback.evil.test', 'A', '127.0.0.1'],
    ['ten.evil.test', 'A', '10.0.0.1'],
    ['metadata.evil.test', 'A', '169.254.169.254'],
    ['v6loop.evil.test', 'AAAA', '::1'],
    ['mapped.evil.test', 'AAAA', '::ffff:7f00:1'],
    ['cgnat.evil.test', 'A', '100.64.0.1'],
  ] as const;

  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    hooks = await startReceiver();
    for (const [name, type, value] of private_) world.add(name, type, value);
    world.add('mixed.evil.test', 'A', '93.184.216.34');
    world.add('mixed.evil.test', 'A', '10.1.2.3');
    api = await startTestApi(
      db.store,
      {
        dns: { resolvers: [world.address] },
        network: { allow_private: false },
        webhooks: { ca_file: hooks.caFile, retry_schedule: ['0s'] },
      },
      { roles: { mta: true, webhooks: true } },
    );
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hooks.stop();
    await world.stop();
    await db.drop();
  });

  for (const [name, , value] of private_) {
    it(`refuses to create an endpoint on a name resolving to ${value}`, async function () {
      const res = await t.api.post('/v1/webhooks', { url: `https://${name}/hook` });
      expectError(res, 400, 'validation_error', 'url');
      // dns2 hands ::ffff:7f00:1 back in its dotted form
      expect(res.body.error.message).to.include(value === '::ffff:7f00:1' ? '127.0.0.1' : value);
    });
  }

  for (const url of [
    'https://localhost/x',
    'https://LocalHost./x',
    'https://127.0.0.1/x',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://169.254.169.254/latest/meta-data',
    'https://mixed.evil.test/x',
    'http://example.com/x',
    'https://user:pw@example.com/x',
  ]) {
    it(`refuses to create an endpoint on ${url}`, async function () {
      expectError(await t.api.post('/v1/webhooks', { url }), 400, 'validation_error', 'url');
    });
  }

  it('refuses an attachment path on a private address', async function () {
    const res = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [`delivered@${SIM}`],
      subject: 's',
      text: 't',
      attachments: [{ path: 'https://metadata.evil.test/secret.txt' }],
    });
    expectError(res, 400, 'validation_error', 'attachments[0].path');
  });

  it('checks again at delivery: a name that moved to a private address gets nothing', async function () {
    // created while the name pointed at a public address, paused so that nothing is sent there
    world.add('moving.evil.test', 'A', '93.184.216.34');
    const e = (
      await t.api.post('/v1/webhooks', {
        url: `https://moving.evil.test:${hooks.port}/ok/moving`,
        events: ['email.delivered'],
      })
    ).body;
    expect(e.id).to.match(/^whe_/);
    world.remove('moving.evil.test', 'A');
    world.add('moving.evil.test', 'A', '127.0.0.1');
    await t.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 's', text: 't' });
    const log = await waitFor(
      async () =>
        (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0]?.status === 'failed' &&
        (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0],
      8000,
      'the refused delivery',
    );
    expect(log.attempt_log[0].error).to.match(/127\.0\.0\.1.*not a public address/);
    expect(hooks.to('/ok/moving')).to.have.length(0);
  });

  it('connects to the address it checked, whatever DNS answers afterwards (no rebinding)', async function () {
    const resolve = resolverLookup(createResolver({ servers: [world.address] }));
    world.add('rebind.hooks.test', 'A', '127.0.0.1');
    const checked = await checkUrl(`https://rebind.hooks.test:${hooks.port}/ok/rebind`, {
      allowPrivate: true,
      resolve,
    });
    world.remove('rebind.hooks.test', 'A');
    world.add('rebind.hooks.test', 'A', '127.0.0.2');
    const res = await requestChecked(
      checked,
      { method: 'GET' },
      { allowPrivate: true, resolve, timeoutMs: 5000, ca: readFileSync(hooks.caFile) },
    );
    expect(res.status).to.equal(200);
    expect(res.address).to.equal('127.0.0.1');
  });

  it('fails a TLS handshake with an untrusted certificate without crashing', async function () {
    const resolve = resolverLookup(createResolver({ servers: [world.address] }));
    world.add('untrusted.test', 'A', '127.0.0.1');
    const err = await guardedRequest(
      `https://untrusted.test:${hooks.port}/ok/x`,
      { method: 'GET' },
      { allowPrivate: true, resolve, timeoutMs: 5000 },
    ).catch((e: Error) => e);
    expect((err as Error).message).to.match(/certificate|self.signed|issuer/i);
  });
});
