import { expect } from 'chai';
import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { Received } from '../helpers/https-receiver.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { plainMessage } from '../fixtures/report-builders.js';

// Resend's own Node SDK against the Resend-compatible surface (docs/resend.md) for the account's
// resources: domains, API keys and webhooks, with the calls of Resend's documentation and what it
// says each returns; webhook deliveries checked with the verification code of Resend's docs.

const SIM = 'simulator.posthorn.test';
const ZONE = 'dkim.resend-account.test';
let n = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;

eachDatabase("Resend's SDK against /resend: domains, API keys, webhooks", (db) => {
  let hw: HookWorld;
  let api: TestApi;
  let t: Tenant;
  let resend: Resend;
  const sdk = (key: string) => new Resend(key, { baseUrl: `${api.baseUrl}/resend` });

  before(async function () {
    hw = await startHookWorld();
    const hooks = hw.config({ retry_schedule: ['0s', '1s'] });
    api = await startTestApi(
      db().store,
      {
        ...hooks,
        dns: { ...hooks.dns, zone: ZONE, server: { enabled: true, host: '127.0.0.1', port: 0 } },
        outbound: { hostname: 'mta.resend-account.test' },
        smtp: { inbound: { enabled: false }, submission: { host: '127.0.0.1', port: 0 } },
      },
      { roles: { mta: true, dns: true, webhooks: true, submission: true } },
    );
    hw.world.delegate(ZONE, '127.0.0.1', api.running.dnsPort!);
    t = await api.tenant();
    resend = sdk(t.key);
  });
  after(async function () {
    await api?.stop();
    await hw?.stop();
  });

  describe('domains', function () {
    it('creates example.com and answers Resend’s create shape with its records as Resend lists them', async function () {
      const { data, error } = await resend.domains.create({ name: 'example.com' });
      expect(error).to.equal(null);
      expect(data).to.not.have.property('object');
      expect(data).to.deep.include({
        name: 'example.com',
        status: 'not_started',
        region: 'us-east-1',
        capabilities: { sending: 'enabled', receiving: 'disabled' },
        open_tracking: false,
        click_tracking: false,
      });
      expect(data!.id).to.match(/^dom_/);
      expect(Date.parse(data!.created_at)).to.be.closeTo(Date.now(), 60_000);
      const v1 = (await t.api.get(`/v1/domains/${data!.id}`)).body;
      expect(data!.records.map((r) => [r.record, r.type, r.name])).to.deep.equal([
        ['DKIM', 'CNAME', 'ph1._domainkey'],
        ['DKIM', 'CNAME', 'ph2._domainkey'],
        ['DKIM', 'CNAME', 'ph3._domainkey'],
        ['SPF', 'MX', 'send'],
        ['SPF', 'TXT', 'send'],
        ['DMARC', 'TXT', '_dmarc'],
      ]);
      for (const [i, r] of data!.records.entries()) {
        expect(r).to.include({ ttl: 'Auto', status: 'not_started', value: v1.records[i].value });
        expect(`${r.name}.example.com`).to.equal(v1.records[i].name);
      }
      expect(data!.records[3]).to.include({ priority: 10 });
      expect(data!.records[0]).to.not.have.property('priority');
    });

    it('gets, lists, updates, verifies and removes a domain', async function () {
      const created = (await resend.domains.create({ name: 'updates.example.org', region: 'eu-west-1' })).data!;
      const got = await resend.domains.get(created.id);
      expect(got.error).to.equal(null);
      expect(got.data).to.deep.include({ object: 'domain', id: created.id, name: 'updates.example.org' });
      expect(got.data!.region).to.equal('eu-west-1');
      expect(got.data!.records).to.have.length(6);

      const list = await resend.domains.list();
      expect(list.data).to.deep.include({ object: 'list', has_more: false });
      const listed = list.data!.data.find((d) => d.id === created.id)!;
      expect(listed).to.include({ name: 'updates.example.org', status: 'not_started' });
      expect(listed).to.not.have.property('records');
      const page = await resend.domains.list({ limit: 1 });
      expect(page.data).to.deep.include({ has_more: true });
      expect(page.data!.data.map((d) => d.id)).to.deep.equal([created.id]);

      const updated = await resend.domains.update({ id: created.id, openTracking: true, tls: 'enforced' });
      expect(updated).to.deep.include({ error: null, data: { object: 'domain', id: created.id } });
      expect((await t.api.get(`/v1/domains/${created.id}`)).body).to.include({
        open_tracking: true,
        click_tracking: false,
        tls: 'enforced',
      });

      // nothing published yet: checked, still pending (Resend's answer is the same either way)
      const verified = await resend.domains.verify(created.id);
      expect(verified).to.deep.include({ error: null, data: { object: 'domain', id: created.id } });
      const after = (await resend.domains.get(created.id)).data!;
      expect(after.status).to.equal('pending');
      expect(after.records.map((r) => r.status)).to.include('pending');

      const removed = await resend.domains.remove(created.id);
      expect(removed).to.deep.include({ error: null, data: { object: 'domain', id: created.id, deleted: true } });
      expect((await resend.domains.get(created.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
    });

    it('verifies a domain whose records are published: the domain and its records become verified', async function () {
      const created = (await resend.domains.create({ name: `${uid('s')}.send.test` })).data!;
      const v1 = (await t.api.get(`/v1/domains/${created.id}`)).body;
      for (const r of v1.records as Array<{ name: string; type: 'CNAME' | 'MX' | 'TXT'; value: string }>)
        hw.world.add(r.name, r.type, r.type === 'MX' ? { exchange: r.value, priority: 10 } : r.value);
      expect((await resend.domains.verify(created.id)).data).to.deep.equal({ object: 'domain', id: created.id });
      const got = (await resend.domains.get(created.id)).data!;
      expect(got.status).to.equal('verified');
      expect(got.records.map((r) => r.status)).to.deep.equal(Array(6).fill('verified'));
    });

    it('refuses by name what it cannot do: receiving, disabling sending, a tracking subdomain', async function () {
      for (const [options, field] of [
        [{ capabilities: { receiving: 'enabled' } }, 'capabilities.receiving'],
        [{ capabilities: { sending: 'disabled' } }, 'capabilities.sending'],
        [{ trackingSubdomain: 'links' }, 'tracking_subdomain'],
      ] as const) {
        const { data, error } = await resend.domains.create({ name: `${uid('r')}.example.net`, ...options });
        expect(data).to.equal(null);
        expect(error).to.deep.include({ name: 'validation_error', statusCode: 422 });
        expect(error!.message).to.match(new RegExp(`^${field}: .*not available`));
      }
      // what it does anyway is taken
      const ok = await resend.domains.create({
        name: `${uid('r')}.example.net`,
        capabilities: { sending: 'enabled', receiving: 'disabled' },
      });
      expect(ok.error).to.equal(null);
      const upd = await resend.domains.update({ id: ok.data!.id, capabilities: { receiving: 'enabled' } });
      expect(upd.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    });
  });

  describe('API keys', function () {
    it('makes a sending_access key that sends but cannot list domains; lists, renames and removes it', async function () {
      const { data, error } = await resend.apiKeys.create({ name: 'Production', permission: 'sending_access' });
      expect(error).to.equal(null);
      expect(Object.keys(data!).sort()).to.deep.equal(['id', 'token']);
      expect(data!.token).to.match(/^ph_test_/);
      const sending = sdk(data!.token);
      const sent = await sending.emails.send({
        from: 'Acme <onboarding@example.com>',
        to: [`delivered@${SIM}`],
        subject: 'Hello World',
        html: '<strong>It works!</strong>',
      });
      expect(sent.error).to.equal(null);
      expect(sent.data!.id).to.match(/^msg_/);
      const denied = await sending.domains.list();
      expect(denied.data).to.equal(null);
      expect(denied.error).to.deep.include({ name: 'restricted_api_key', statusCode: 401 });

      const list = await resend.apiKeys.list();
      expect(list.data).to.deep.include({ object: 'list', has_more: false });
      const listed = list.data!.data.find((k) => k.id === data!.id)!;
      expect(Object.keys(listed).sort()).to.deep.equal(['created_at', 'id', 'last_used_at', 'name']);
      expect(listed.name).to.equal('Production');
      expect(JSON.stringify(list.data)).to.not.include(data!.token);
      const v1 = (await t.api.get('/v1/api-keys')).body.data.find((k: { id: string }) => k.id === data!.id);
      expect(v1).to.include({ domain_id: null });
      expect(v1.scopes).to.deep.equal(['emails:send']);

      expect(await resend.apiKeys.update(data!.id, { name: 'Production (old)' })).to.deep.include({
        error: null,
        data: { object: 'api_key', id: data!.id },
      });
      const removed = await resend.apiKeys.remove(data!.id);
      expect(removed).to.deep.include({ error: null, data: { object: 'api_key', id: data!.id, deleted: true } });
      const after = await sending.emails.send({
        from: 'a@example.com',
        to: [`delivered@${SIM}`],
        subject: 's',
        text: 'x',
      });
      expect(after.error).to.deep.include({ name: 'invalid_api_key', statusCode: 403 });
      expect((await resend.apiKeys.list()).data!.data.map((k) => k.id)).to.not.include(data!.id);
    });

    it('makes a full_access key by default, which holds every scope', async function () {
      const { data } = await resend.apiKeys.create({ name: 'Admin' });
      const v1 = (await t.api.get('/v1/api-keys')).body.data.find((k: { id: string }) => k.id === data!.id);
      expect(v1.scopes).to.include.members(['emails:send', 'domains:manage', 'keys:manage', 'broadcasts:manage']);
      expect((await sdk(data!.token).domains.list()).error).to.equal(null);
    });

    describe('with domain_id', function () {
      let domain: { id: string; name: string };
      let key: string;
      before(async function () {
        domain = (await resend.domains.create({ name: `${uid('shop')}.example` })).data!;
        const made = await resend.apiKeys.create({
          name: 'Shop',
          permission: 'sending_access',
          domain_id: domain.id,
        });
        expect(made.error).to.equal(null);
        key = made.data!.token;
      });

      it('sends from that domain only, by the API and in a batch', async function () {
        const shop = sdk(key);
        const ok = await shop.emails.send({
          from: `orders@${domain.name}`,
          to: `delivered@${SIM}`,
          subject: 'o',
          text: 'x',
        });
        expect(ok.error).to.equal(null);
        const other = await shop.emails.send({
          from: 'a@elsewhere.example',
          to: `delivered@${SIM}`,
          subject: 'o',
          text: 'x',
        });
        expect(other.data).to.equal(null);
        expect(other.error).to.deep.include({ name: 'restricted_api_key', statusCode: 401 });
        expect(other.error!.message).to.include(domain.name).and.include('elsewhere.example');
        const batch = await shop.batch.send([
          { from: `orders@${domain.name}`, to: `delivered@${SIM}`, subject: 'o', text: 'x' },
          { from: 'a@elsewhere.example', to: `delivered@${SIM}`, subject: 'o', text: 'x' },
        ]);
        expect(batch.error).to.deep.include({ name: 'restricted_api_key', statusCode: 401 });
        const v1 = (await t.api.get('/v1/api-keys')).body.data.find((k: { name: string }) => k.name === 'Shop');
        expect(v1).to.include({ domain_id: domain.id });
      });

      it('sends from that domain only over SMTP submission', async function () {
        const port = api.running.submissionPort!;
        const send = (from: string) =>
          smtpSend(port, {
            from,
            to: [`delivered@${SIM}`],
            raw: plainMessage({ from, to: `delivered@${SIM}`, subject: uid('smtp'), text: 'x' }),
            auth: { user: 'any', pass: key },
          });
        const ok = await send(`orders@${domain.name}`);
        expect(ok.ok, JSON.stringify(ok)).to.equal(true);
        const refused = await send('a@elsewhere.example');
        expect(refused.ok).to.equal(false);
        expect(JSON.stringify(refused)).to.match(/550/).and.include(domain.name);
      });

      it('is not used for a full_access key, as Resend documents', async function () {
        const made = await resend.apiKeys.create({ name: 'Full', permission: 'full_access', domain_id: domain.id });
        const sent = await sdk(made.data!.token).emails.send({
          from: 'a@elsewhere.example',
          to: `delivered@${SIM}`,
          subject: 'o',
          text: 'x',
        });
        expect(sent.error).to.equal(null);
      });

      it('refuses a domain_id that is no domain of the project', async function () {
        const { error } = await resend.apiKeys.create({
          name: 'X',
          permission: 'sending_access',
          domain_id: 'dom_00000000000000000000000000',
        });
        expect(error).to.deep.include({ name: 'validation_error', statusCode: 422 });
        expect(error!.message).to.match(/^domain_id: /);
      });
    });
  });

  describe('webhooks', function () {
    /** the delivery of `type` about email `emailId` at `path` */
    const delivery = (path: string, emailId: string, type: string) =>
      hw.hooks.waitFor(
        (r) => r.path === path && r.json?.type === type && r.json.data?.email_id === emailId,
        15_000,
        `${type} of ${emailId} at ${path}`,
      );
    const send = async () =>
      (
        await resend.emails.send({
          from: 'Acme <hooks@example.com>',
          to: `delivered@${SIM}`,
          subject: 'Hook',
          text: 'x',
        })
      ).data!.id;
    /** Resend's docs: the receiver passes the svix-* headers to resend.webhooks.verify() */
    const verifyAsResendDocs = (req: Received, signingSecret: string) =>
      resend.webhooks.verify({
        payload: req.rawBody,
        headers: {
          id: req.headers['svix-id'],
          timestamp: req.headers['svix-timestamp'],
          signature: req.headers['svix-signature'],
        },
        webhookSecret: signingSecret,
      });

    it('creates a webhook whose deliveries Resend’s verify() and standardwebhooks accept, also after a rotation', async function () {
      const path = `/ok/${uid('resend')}`;
      const { data, error } = await resend.webhooks.create({
        endpoint: hw.hooks.url(path),
        events: ['email.sent', 'email.delivered'],
      });
      expect(error).to.equal(null);
      expect(data).to.include({ object: 'webhook' });
      expect(data!.id).to.match(/^whe_/);
      expect(data!.signing_secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);

      const id = await send();
      for (const type of ['email.sent', 'email.delivered']) {
        const req = await delivery(path, id, type);
        const event = verifyAsResendDocs(req, data!.signing_secret);
        expect(event).to.deep.equal(JSON.parse(req.rawBody));
        expect(event).to.include({ type });
        expect(new Webhook(data!.signing_secret).verify(req.rawBody, req.headers)).to.deep.equal(event);
        expect(req.headers['svix-id']).to.equal(req.headers['webhook-id']);
      }

      const rotated = await resend.webhooks.rotateSigningSecret(data!.id);
      expect(rotated.error).to.equal(null);
      expect(rotated.data).to.include({ object: 'webhook', id: data!.id });
      expect(rotated.data!.signing_secret)
        .to.match(/^whsec_/)
        .and.not.equal(data!.signing_secret);
      expect((await resend.webhooks.get(data!.id)).data!.signing_secret).to.equal(rotated.data!.signing_secret);
      const again = await send();
      const req = await delivery(path, again, 'email.delivered');
      // the new secret verifies; the old one too, for its 24 hours
      for (const secret of [rotated.data!.signing_secret, data!.signing_secret]) {
        expect(verifyAsResendDocs(req, secret)).to.deep.equal(JSON.parse(req.rawBody));
        expect(new Webhook(secret).verify(req.rawBody, req.headers)).to.be.an('object');
      }
    });

    it('gets, lists, updates and removes a webhook', async function () {
      const endpoint = hw.hooks.url(`/ok/${uid('crud')}`);
      const created = (await resend.webhooks.create({ endpoint, events: ['email.bounced'] })).data!;
      const got = await resend.webhooks.get(created.id);
      expect(got.error).to.equal(null);
      expect(got.data).to.deep.include({
        object: 'webhook',
        id: created.id,
        status: 'enabled',
        endpoint,
        events: ['email.bounced'],
        signing_secret: created.signing_secret,
      });
      expect(Date.parse(got.data!.created_at)).to.be.closeTo(Date.now(), 60_000);

      const list = await resend.webhooks.list();
      expect(list.data).to.deep.include({ object: 'list' });
      const listed = list.data!.data.find((w) => w.id === created.id)!;
      expect(listed).to.deep.equal({
        id: created.id,
        endpoint,
        created_at: got.data!.created_at,
        status: 'enabled',
        events: ['email.bounced'],
      });

      const updated = await resend.webhooks.update(created.id, {
        status: 'disabled',
        events: ['email.delivered', 'email.complained'],
      });
      expect(updated).to.deep.include({ error: null, data: { object: 'webhook', id: created.id } });
      expect((await resend.webhooks.get(created.id)).data).to.deep.include({
        status: 'disabled',
        events: ['email.delivered', 'email.complained'],
      });
      // the same endpoint through /v1: Resend's formats
      expect((await t.api.get(`/v1/webhooks/${created.id}`)).body).to.include({
        active: false,
        signature: 'standard',
        payload: 'resend',
      });

      const removed = await resend.webhooks.remove(created.id);
      expect(removed).to.deep.include({ error: null, data: { object: 'webhook', id: created.id, deleted: true } });
      expect((await resend.webhooks.get(created.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
    });

    it('refuses an event of Resend’s it does not emit, and a bad endpoint, by name', async function () {
      const lacking = await resend.webhooks.create({
        endpoint: hw.hooks.url('/ok/x'),
        events: ['email.sent', 'domain.created'],
      });
      expect(lacking.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
      expect(lacking.error!.message).to.match(/^events\[1\]: "domain.created" is not available/);
      const plain = await resend.webhooks.create({ endpoint: 'http://hooks.test/x', events: ['email.sent'] });
      expect(plain.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
      expect(plain.error!.message).to.match(/^endpoint: /);
    });
  });
});
