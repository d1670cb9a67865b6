import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import type { Reply } from '../helpers/http.js';

eachDatabase('suppressions routes (CONTRACT §5, issue 23)', (db) => {
  let api: TestApi;
  before(async function () {
    api = await startTestApi(db().store);
  });
  after(async function () {
    await api.stop();
  });

  const send = (t: Awaited<ReturnType<TestApi['tenant']>>, to: string) =>
    t.api.post('/v1/emails', { from: 'app@example.test', to: [to], subject: 's', text: 't' });

  it('adds a manual suppression that the send path then honours, and removes it again', async function () {
    const t = await api.tenant();
    const added = await t.api.post('/v1/suppressions', { email: 'Someone@Example.COM' });
    expect(added.status).to.equal(201);
    expect(added.body).to.include({ object: 'suppression', email: 'someone@example.com', reason: 'manual' });
    expect(Date.parse(added.body.created_at)).to.be.closeTo(Date.now(), 60_000);
    expectError(await send(t, 'someone@example.com'), 422, 'recipient_suppressed');

    const removed = await t.api.delete('/v1/suppressions/SOMEONE%40example.com');
    expect(removed.status).to.equal(200);
    expect(removed.body).to.include({
      object: 'suppression',
      email: 'someone@example.com',
      reason: 'manual',
      deleted: true,
    });
    expect((await send(t, 'someone@example.com')).status).to.equal(202);
    expectError(await t.api.delete('/v1/suppressions/someone%40example.com'), 404, 'not_found');
  });

  it('ends a suppression at its expires_at: it blocks until then, nothing after, and the job deletes it', async function () {
    const t = await api.tenant();
    const until = new Date(Date.now() + 1500).toISOString();
    const added = await t.api.post('/v1/suppressions', {
      email: 'brief@example.com',
      reason: 'bounce',
      expires_at: until,
    });
    expect(added.status).to.equal(201);
    expect(added.body).to.include({ email: 'brief@example.com', reason: 'bounce', expires_at: until });
    expect((await t.api.post('/v1/suppressions', { email: 'forever@example.com' })).body.expires_at).to.equal(null);
    expectError(await send(t, 'brief@example.com'), 422, 'recipient_suppressed');

    await new Promise((r) => setTimeout(r, Date.parse(until) - Date.now() + 50));
    expect((await send(t, 'brief@example.com')).status).to.equal(202);
    const listed = (await t.api.get('/v1/suppressions')).body.data.map((x: { email: string }) => x.email);
    expect(listed).to.deep.equal(['forever@example.com']);
    expectError(await t.api.delete('/v1/suppressions/brief%40example.com'), 404, 'not_found');
    // suppressed again: a new entry, not the expired one's reason and date
    const again = await t.api.post('/v1/suppressions', { email: 'brief@example.com' });
    expect(again.status).to.equal(201);
    expect(again.body).to.include({ reason: 'manual', expires_at: null });
    expectError(await send(t, 'brief@example.com'), 422, 'recipient_suppressed');

    expect(
      (
        await t.api.post('/v1/suppressions', {
          email: 'gone@example.com',
          expires_at: new Date(Date.now() + 300).toISOString(),
        })
      ).status,
    ).to.equal(201);
    await new Promise((r) => setTimeout(r, 400));
    expect(await api.core.services.suppressions.pruneExpired()).to.be.at.least(1);
    const rows = await db().store.knex('suppressions').where({ project_id: t.project.id }).select('address');
    expect(rows.map((r: { address: string }) => r.address).sort()).to.deep.equal([
      'brief@example.com',
      'forever@example.com',
    ]);

    expectError(
      await t.api.post('/v1/suppressions', {
        email: 'late@example.com',
        expires_at: new Date(Date.now() - 1000).toISOString(),
      }),
      400,
      'validation_error',
      'expires_at',
    );
    expectError(
      await t.api.post('/v1/suppressions', { email: 'late@example.com', expires_at: 'tomorrow' }),
      400,
      'validation_error',
      'expires_at',
    );
  });

  it('adding an address already suppressed changes nothing and answers 200 with its first reason', async function () {
    const t = await api.tenant();
    expect((await t.api.post('/v1/suppressions', { email: 'twice@example.com', reason: 'complaint' })).status).to.equal(
      201,
    );
    const again = await t.api.post('/v1/suppressions', { email: 'twice@example.com' });
    expect(again.status).to.equal(200);
    expect(again.body).to.include({ email: 'twice@example.com', reason: 'complaint' });
    expect((await t.api.get('/v1/suppressions')).body.data).to.have.length(1);
  });

  it('lists newest first in pages that join up without gaps or repeats, filtered by reason and by a part of the address', async function () {
    const t = await api.tenant();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      const email = `user${i}@${i % 2 ? 'odd' : 'even'}.example`;
      made.push(email);
      expect(
        (await t.api.post('/v1/suppressions', { email, reason: i % 3 === 0 ? 'bounce' : 'manual' })).status,
      ).to.equal(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Reply = await t.api.get(`/v1/suppressions?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).to.equal(200);
      expect(page.body.object).to.equal('list');
      seen.push(...page.body.data.map((s: { email: string }) => s.email));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen).to.have.members(made).and.have.length(7);
    const times = (await t.api.get('/v1/suppressions?limit=100')).body.data.map((s: { created_at: string }) =>
      Date.parse(s.created_at),
    );
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));

    const bounces = await t.api.get('/v1/suppressions?reason=bounce');
    expect(bounces.body.data.map((s: { email: string }) => s.email)).to.have.members([
      'user0@even.example',
      'user3@odd.example',
      'user6@even.example',
    ]);
    const odd = await t.api.get('/v1/suppressions?email=ODD.EX');
    expect(odd.body.data.map((s: { email: string }) => s.email)).to.have.members([
      'user1@odd.example',
      'user3@odd.example',
      'user5@odd.example',
    ]);
    // LIKE's wildcards in the search are plain characters
    expect((await t.api.get('/v1/suppressions?email=user_')).body.data).to.have.length(0);
    expect((await t.api.get('/v1/suppressions?email=%25')).body.data).to.have.length(0);
  });

  it("keeps each project to its own list: another project's suppression is neither listed nor removable", async function () {
    const a = await api.tenant();
    const b = await api.tenant();
    await a.api.post('/v1/suppressions', { email: 'private@example.com' });
    expect((await b.api.get('/v1/suppressions')).body.data).to.have.length(0);
    expectError(await b.api.delete('/v1/suppressions/private%40example.com'), 404, 'not_found');
    expect((await send(b, 'private@example.com')).status).to.equal(202);
    expect((await a.api.get('/v1/suppressions')).body.data).to.have.length(1);
  });

  it('needs the suppressions:manage scope on every route', async function () {
    const t = await api.tenant({ scopes: ['emails:send', 'emails:read'] });
    expectError(await t.api.get('/v1/suppressions'), 403, 'forbidden');
    expectError(await t.api.post('/v1/suppressions', { email: 'x@example.com' }), 403, 'forbidden');
    expectError(await t.api.delete('/v1/suppressions/x%40example.com'), 403, 'forbidden');
    expectError(await api.anonymous.get('/v1/suppressions'), 401, 'unauthorized');
  });

  it('refuses bad input naming the field, and stores nothing', async function () {
    const t = await api.tenant();
    expectError(await t.api.post('/v1/suppressions', { email: 'not an address' }), 400, 'validation_error', 'email');
    expectError(await t.api.post('/v1/suppressions', {}), 400, 'validation_error', 'email');
    expectError(
      await t.api.post('/v1/suppressions', { email: 'a@example.com', reason: 'spam' }),
      400,
      'validation_error',
      'reason',
    );
    expectError(
      await t.api.post('/v1/suppressions', { email: 'a@example.com', note: 'x' }),
      400,
      'validation_error',
      'note',
    );
    expectError(await t.api.get('/v1/suppressions?limit=0'), 400, 'validation_error', 'limit');
    expectError(await t.api.get('/v1/suppressions?reason=spam'), 400, 'validation_error', 'reason');
    expectError(await t.api.get('/v1/suppressions?cursor=bm9wZQ'), 400, 'validation_error', 'cursor');
    expect((await t.api.get('/v1/suppressions')).body.data).to.have.length(0);
  });
});
