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

  it('answers 404 for revoking a key that does not exist', async function () {
    const t = await api.tenant();
    expectError(await t.api.delete('/v1/api-keys/key_00000000000000000000000000'), 404, 'not_found');
  });
});
