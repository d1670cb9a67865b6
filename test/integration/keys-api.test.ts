import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { client } from '../helpers/http.js';

eachDatabase('API keys routes (CONTRACT §5)', (db) => {
  let api: TestApi;
  before(async function () {
    api = await startTestApi(db().store);
  });
  after(async function () {
    await api.stop();
  });

  it('creates a key that works, shows it once and lists it without the secret', async function () {
    const t = await api.tenant();
    const res = await t.api.post('/v1/api-keys', { name: 'reader', scopes: ['emails:read'] });
    expect(res.status).to.equal(201);
    expect(res.body.key).to.match(/^ph_test_[A-Za-z0-9]{40}$/);
    expect(res.body).to.include({ object: 'api_key', name: 'reader', mode: 'test', project_id: t.project.id });
    expect(res.body.scopes).to.deep.equal(['emails:read']);
    const made = client(api.baseUrl, res.body.key);
    expect((await made.get('/v1/emails')).status).to.equal(200);
    expectError(await made.get('/v1/api-keys'), 403, 'forbidden');
    const list = await t.api.get('/v1/api-keys');
    expect(list.text).to.not.include(res.body.key);
    expect(list.text).to.not.include(res.body.key.slice(8, 14));
    expect(list.body.data.find((k: { id: string }) => k.id === res.body.id)).to.include({
      prefix: 'ph_test_',
      revoked_at: null,
    });
  });

  it('refuses to grant a scope the creating key lacks', async function () {
    const t = await api.tenant({ scopes: ['keys:manage', 'emails:read'] });
    const res = await t.api.post('/v1/api-keys', { scopes: ['emails:send'] });
    expectError(res, 403, 'forbidden');
    expect(res.body.error.message).to.include('emails:send');
  });

  it('refuses to create a live key from a test key', async function () {
    const t = await api.tenant({ mode: 'test' });
    expectError(await t.api.post('/v1/api-keys', { mode: 'live' }), 403, 'forbidden');
  });

  it("gives a new key the creating key's mode and scopes by default", async function () {
    const t = await api.tenant({ scopes: ['keys:manage', 'emails:read'] });
    const res = await t.api.post('/v1/api-keys', {});
    expect(res.status).to.equal(201);
    expect(res.body.mode).to.equal('test');
    expect(res.body.scopes).to.deep.equal(['keys:manage', 'emails:read']);
  });

  it("revokes a key at once, and keeps another project's keys out of reach (404, not listed)", async function () {
    const a = await api.tenant();
    const b = await api.tenant();
    const victim = await a.newKey({ scopes: ['emails:read'] });
    expectError(await b.api.delete(`/v1/api-keys/${victim.id}`), 404, 'not_found');
    expect((await b.api.get('/v1/api-keys')).body.data.map((k: { id: string }) => k.id)).to.not.include(victim.id);
    expect((await victim.api.get('/v1/emails')).status).to.equal(200);
    const revoked = await a.api.delete(`/v1/api-keys/${victim.id}`);
    expect(revoked.status).to.equal(200);
    expect(revoked.body).to.include({ id: victim.id, object: 'api_key' });
    expect(revoked.body.revoked_at).to.be.a('string');
    expectError(await victim.api.get('/v1/emails'), 401, 'unauthorized');
  });

  it("renames a key (PATCH), and answers 404 for another project's", async function () {
    const a = await api.tenant();
    const b = await api.tenant();
    const k = await a.newKey({ scopes: ['emails:read'] });
    const res = await a.api.patch(`/v1/api-keys/${k.id}`, { name: 'reporting' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ id: k.id, name: 'reporting' });
    expect((await a.api.patch(`/v1/api-keys/${k.id}`, { name: null })).body).to.include({ name: null });
    expectError(await b.api.patch(`/v1/api-keys/${k.id}`, { name: 'x' }), 404, 'not_found');
  });

  describe('domain_id: a key that sends from one domain only', function () {
    let t: Awaited<ReturnType<TestApi['tenant']>>;
    let domainId: string;
    const domain = `k${Date.now().toString(36)}.example`;
    const send = (c: ReturnType<typeof client>, from: string) =>
      c.post('/v1/emails', { from, to: ['delivered@simulator.posthorn.test'], subject: 's', text: 'x' });
    before(async function () {
      t = await api.tenant();
      const d = await t.api.post('/v1/domains', { domain });
      expect(d.status, d.text).to.equal(201);
      domainId = d.body.id;
    });

    it('is shown, and sends From that domain only (403 forbidden naming it), batches too', async function () {
      const res = await t.api.post('/v1/api-keys', { name: 'shop', scopes: ['emails:send'], domain_id: domainId });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ domain_id: domainId });
      const shop = client(api.baseUrl, res.body.key);
      expect((await send(shop, `orders@${domain}`)).status).to.equal(202);
      const refused = expectError(await send(shop, 'a@other.example'), 403, 'forbidden');
      expect(refused.message).to.include(domain).and.include('other.example');
      const batch = await shop.post('/v1/emails/batch', [
        { from: `orders@${domain}`, to: ['delivered@simulator.posthorn.test'], subject: 's', text: 'x' },
        { from: 'a@other.example', to: ['delivered@simulator.posthorn.test'], subject: 's', text: 'x' },
      ]);
      expectError(batch, 403, 'forbidden');
      const listed = (await t.api.get('/v1/api-keys')).body.data.find((k: { id: string }) => k.id === res.body.id);
      expect(listed).to.include({ domain_id: domainId });
    });

    it('gets no broadcasts:manage (nothing checks a broadcast against the key), and refuses it by name', async function () {
      const res = await t.api.post('/v1/api-keys', { domain_id: domainId });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.scopes).to.include('emails:send').and.not.include('broadcasts:manage');
      expectError(
        await t.api.post('/v1/api-keys', { scopes: ['emails:send', 'broadcasts:manage'], domain_id: domainId }),
        400,
        'validation_error',
        'domain_id',
      );
    });

    it('refuses a domain of another project, and one that does not exist (400 naming domain_id)', async function () {
      const other = await api.tenant();
      expectError(await other.api.post('/v1/api-keys', { domain_id: domainId }), 400, 'validation_error', 'domain_id');
      expectError(
        await t.api.post('/v1/api-keys', { domain_id: 'dom_00000000000000000000000000' }),
        400,
        'validation_error',
        'domain_id',
      );
    });

    it('a restricted key creates only keys restricted to its domain, by default so', async function () {
      const made = await t.api.post('/v1/api-keys', { scopes: ['emails:send', 'keys:manage'], domain_id: domainId });
      const restricted = client(api.baseUrl, made.body.key);
      const child = await restricted.post('/v1/api-keys', { scopes: ['emails:send'] });
      expect(child.status, child.text).to.equal(201);
      expect(child.body).to.include({ domain_id: domainId });
      const other = await t.api.post('/v1/domains', { domain: `o${domain}` });
      expectError(
        await restricted.post('/v1/api-keys', { scopes: ['emails:send'], domain_id: other.body.id }),
        403,
        'forbidden',
      );
    });

    it('sends from nowhere once its domain is removed', async function () {
      const d = await t.api.post('/v1/domains', { domain: `gone-${domain}` });
      const made = await t.api.post('/v1/api-keys', { scopes: ['emails:send'], domain_id: d.body.id });
      expect((await t.api.delete(`/v1/domains/${d.body.id}`)).status).to.equal(200);
      api.deps.auth.invalidate();
      const refused = expectError(await send(client(api.baseUrl, made.body.key), `a@gone-${domain}`), 403, 'forbidden');
      expect(refused.message).to.include('removed');
    });
  });

  it('answers 404 for revoking a key that does not exist', async function () {
    const t = await api.tenant();
    expectError(await t.api.delete('/v1/api-keys/key_00000000000000000000000000'), 404, 'not_found');
  });
});
