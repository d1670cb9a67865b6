import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { checkUrl, EgressError, resolverLookup } from '../../src/net/egress.js';
import { createResolver } from '../../src/dns/resolver.js';

const SIM = 'simulator.posthorn.test';

// An operator trying the appliance out points a webhook at a receiver on their own machine. dns.resolvers
// (here a DNS world that knows no localhost) never answer for localhost: the system's hosts file does.
describe('a webhook endpoint at localhost', function () {
  let world: DnsWorld;
  let hooks: HttpsReceiver;
  let n = 0;
  const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}-${++n}`;
  const localUrl = (path: string) => `https://localhost:${hooks.port}${path}`;

  before(async function () {
    world = await startDnsWorld();
    // on [::1] too: the hosts file may give localhost either address first
    hooks = await startReceiver({ ipv6: true });
  });
  after(async function () {
    await hooks.stop();
    await world.stop();
  });

  describe('the guard itself', function () {
    const resolve = () => resolverLookup(createResolver({ servers: [world.address], timeoutMs: 2000, tries: 1 }));

    it('resolves localhost through the hosts file with allow_private, to a loopback address', async function () {
      const checked = await checkUrl(localUrl('/ok/x'), { allowPrivate: true, resolve: resolve() });
      expect(checked.address).to.be.oneOf(['127.0.0.1', '::1']);
      expect(checked.url.hostname).to.equal('localhost');
    });

    it('refuses localhost without allow_private, before any lookup', async function () {
      let asked = 0;
      const counting = async (host: string) => {
        asked++;
        return resolve()(host);
      };
      for (const url of [localUrl('/ok/x'), 'https://LOCALHOST./x']) {
        const e = await checkUrl(url, { allowPrivate: false, resolve: counting }).catch((err: unknown) => err);
        expect(e, url).to.be.instanceOf(EgressError);
        expect((e as EgressError).reason, url).to.equal('private_address');
      }
      expect(asked).to.equal(0);
    });

    it('still asks dns.resolvers for every other name (one under localhost included) with allow_private', async function () {
      const e = await checkUrl('https://hooks.localhost/x', { allowPrivate: true, resolve: resolve() }).catch(
        (err: unknown) => err,
      );
      expect((e as EgressError).reason).to.equal('dns_failure');
    });
  });

  describe('through the API and the dispatcher', function () {
    let db: TestDatabase;
    let api: TestApi;
    let t: Tenant;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(
        db.store,
        {
          dns: { resolvers: [world.address] },
          network: { allow_private: true },
          webhooks: { ca_file: hooks.caFile, retry_schedule: ['0s'] },
        },
        { roles: { webhooks: true } },
      );
      t = await api.tenant();
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    it('with allow_private: creates the endpoint and delivers its events there', async function () {
      const path = unique('/ok/');
      const res = await t.api.post('/v1/webhooks', { url: localUrl(path), events: ['email.sent'] });
      expect(res.status, res.text).to.equal(201);
      const sent = await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        subject: 's',
        text: 't',
      });
      expect(sent.status, sent.text).to.equal(202);
      const got = await hooks.waitFor((r) => r.path === path, 10_000, 'the event at localhost');
      expect(got.json).to.deep.include({ type: 'email.sent' });
      expect(got.headers.host).to.equal(`localhost:${hooks.port}`);
      const delivery = await waitFor(
        async () => {
          const d = (await t.api.get(`/v1/webhooks/${res.body.id}/deliveries`)).body.data[0];
          return d?.status === 'succeeded' ? d : null;
        },
        8000,
        'the delivery to succeed',
      );
      expect(delivery).to.include({ status: 'succeeded', last_status_code: 200 });
    });
  });

  describe('with allow_private off', function () {
    let db: TestDatabase;
    let api: TestApi;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(db.store, {
        dns: { resolvers: [world.address] },
        network: { allow_private: false },
        webhooks: { ca_file: hooks.caFile },
      });
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    it('refuses the endpoint: 400 validation_error naming url, and nothing reaches the receiver', async function () {
      const t = await api.tenant();
      const path = unique('/ok/');
      const err = expectError(
        await t.api.post('/v1/webhooks', { url: localUrl(path) }),
        400,
        'validation_error',
        'url',
      );
      expect(err.message).to.match(/not a public address/);
      expect(hooks.to(path)).to.have.length(0);
    });
  });
});
