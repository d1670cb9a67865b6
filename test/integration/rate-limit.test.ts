import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';

describe('per-key rate limit (limits.requests_per_second)', function () {
  let db: TestDatabase;
  let api: TestApi;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(db.store, { limits: { requests_per_second: 3 } });
  });
  after(async function () {
    await api.stop();
    await db.drop();
  });

  it('answers 429 rate_limited with Retry-After in whole seconds once the key is over its rate', async function () {
    const t = await api.tenant();
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await t.api.get('/v1/emails'));
    expect(replies.slice(0, 3).map((r) => r.status)).to.deep.equal([200, 200, 200]);
    const limited = replies[3];
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
  });

  it('limits address verification as any route, and a refused batch costs no verification', async function () {
    const t = await api.tenant();
    const replies: Array<Awaited<ReturnType<typeof t.api.post>>> = [];
    for (let i = 0; i < 4; i++) replies.push(await t.api.post('/v1/verify/batch', { emails: ['not an address'] }));
    expect(
      replies.slice(0, 3).map((r) => (r.body as { verifications: { used: number } }).verifications.used),
    ).to.deep.equal([1, 2, 3]);
    expectError(replies[3], 429, 'rate_limited');
    await new Promise((r) => setTimeout(r, Number(replies[3].headers.get('retry-after')) * 1000));
    const after = await t.api.post('/v1/verify', { email: 'not an address' });
    expect(after.status, after.text).to.equal(200);
    expect((await t.api.post('/v1/verify/batch', { emails: ['not an address'] })).body.verifications.used).to.equal(5);
  });

  it('counts each key on its own', async function () {
    const a = await api.tenant();
    const b = await api.tenant();
    for (let i = 0; i < 4; i++) await a.api.get('/v1/emails');
    expect((await a.api.get('/v1/emails')).status).to.equal(429);
    expect((await b.api.get('/v1/emails')).status).to.equal(200);
  });

  it('lets the key through again after Retry-After', async function () {
    const t = await api.tenant();
    let res;
    do res = await t.api.get('/v1/emails');
    while (res.status === 200);
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 1000));
    expect((await t.api.get('/v1/emails')).status).to.equal(200);
  });
});
