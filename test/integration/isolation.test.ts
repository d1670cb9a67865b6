import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { storedEmail } from '../helpers/fixtures.js';

eachDatabase('project isolation', (db) => {
  let api: TestApi;
  let a: Tenant;
  let b: Tenant;
  before(async function () {
    api = await startTestApi(db().store);
    a = await api.tenant();
    b = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  it("answers 404 for another project's email and shows it to its own project", async function () {
    const email = await storedEmail(db().store, b.project.id);
    expectError(await a.api.get(`/v1/emails/${email.id}`), 404, 'not_found');
    expect((await b.api.get(`/v1/emails/${email.id}`)).status).to.equal(200);
  });

  it("lists only the project's own emails", async function () {
    const mine = await storedEmail(db().store, a.project.id);
    const theirs = await storedEmail(db().store, b.project.id);
    const ids = (await a.api.get('/v1/emails?limit=100')).body.data.map((e: { id: string }) => e.id);
    expect(ids).to.include(mine.id);
    expect(ids).to.not.include(theirs.id);
    const filtered = (await a.api.get(`/v1/emails?to=${encodeURIComponent(theirs.to[0])}`)).body.data.map(
      (e: { id: string }) => e.id,
    );
    expect(filtered).to.not.include(theirs.id);
  });

  it("answers 404 when revoking another project's key, and the key keeps working", async function () {
    const res = await a.api.delete(`/v1/api-keys/${b.keyId}`);
    expectError(res, 404, 'not_found');
    expect((await b.api.get('/v1/emails')).status).to.equal(200);
  });

  it("lists only the project's own keys", async function () {
    const ids = (await a.api.get('/v1/api-keys')).body.data.map((k: { id: string }) => k.id);
    expect(ids).to.include(a.keyId);
    expect(ids).to.not.include(b.keyId);
  });
});
