import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';

eachDatabase('contacts and contact properties (issue 27)', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  const eventsOf = async (projectId: string) =>
    (
      (await db().store.knex('events').select('type', 'data').where({ project_id: projectId }).orderBy('id')) as Array<{
        type: string;
        data: string;
      }>
    ).map((e) => ({ type: e.type, data: JSON.parse(e.data) }));

  it('declares typed properties with fallbacks, refuses bad keys, wrong fallbacks and duplicates, lists and removes them', async function () {
    const plan = await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' });
    expect(plan.status, plan.text).to.equal(201);
    expect(plan.body).to.include({ object: 'contact_property', key: 'plan', type: 'string', fallback: 'free' });
    expect((await t.api.post('/v1/contact-properties', { key: 'seats', type: 'number' })).status).to.equal(201);
    expect((await t.api.post('/v1/contact-properties', { key: 'signup_date', type: 'date' })).status).to.equal(201);
    expect(
      (await t.api.post('/v1/contact-properties', { key: 'vip', type: 'boolean', fallback: false })).status,
    ).to.equal(201);
    expectError(await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string' }), 409, 'conflict');
    expectError(
      await t.api.post('/v1/contact-properties', { key: 'Plan', type: 'string' }),
      400,
      'validation_error',
      'key',
    );
    expectError(
      await t.api.post('/v1/contact-properties', { key: '9lives', type: 'string' }),
      400,
      'validation_error',
      'key',
    );
    expectError(
      await t.api.post('/v1/contact-properties', { key: 'age', type: 'number', fallback: 'old' }),
      400,
      'validation_error',
      'fallback',
    );
    expectError(
      await t.api.post('/v1/contact-properties', { key: 'age', type: 'integer' }),
      400,
      'validation_error',
      'type',
    );
    expect((await t.api.get('/v1/contact-properties')).body.data.map((p: { key: string }) => p.key)).to.deep.equal([
      'plan',
      'seats',
      'signup_date',
      'vip',
    ]);
    expect((await t.api.post('/v1/contact-properties', { key: 'temp', type: 'string' })).status).to.equal(201);
    expect((await t.api.delete('/v1/contact-properties/temp')).body).to.deep.equal({
      object: 'contact_property',
      key: 'temp',
      deleted: true,
    });
    expectError(await t.api.delete('/v1/contact-properties/temp'), 404, 'not_found');
  });

  it('adds a contact with typed properties, unique by address (409 contact_exists, or ?upsert=true), and emits contact events', async function () {
    const res = await t.api.post('/v1/contacts', {
      email: 'Ann <Ann@Example.COM>',
      first_name: 'Ann',
      properties: { plan: 'pro', seats: 3, signup_date: '2026-01-15T10:00:00+01:00', vip: true },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      object: 'contact',
      email: 'ann@example.com',
      first_name: 'Ann',
      last_name: null,
      unsubscribed: false,
    });
    expect(res.body.id).to.match(/^con_[0-9a-z]{26}$/);
    expect(res.body.properties).to.deep.equal({
      plan: 'pro',
      seats: 3,
      signup_date: '2026-01-15T09:00:00.000Z',
      vip: true,
    });
    expect(res.body).to.include.keys('audiences', 'topics', 'created_at', 'updated_at');

    expectError(await t.api.post('/v1/contacts', { email: 'ANN@example.com' }), 409, 'contact_exists');
    expectError(
      await t.api.post('/v1/contacts', { email: 'bob@example.com', properties: { colour: 'red' } }),
      400,
      'validation_error',
      'properties.colour',
    );
    expectError(
      await t.api.post('/v1/contacts', { email: 'bob@example.com', properties: { seats: 'many' } }),
      400,
      'validation_error',
      'properties.seats',
    );
    expectError(
      await t.api.post('/v1/contacts', { email: 'bob@example.com', properties: { signup_date: '2026-02-30' } }),
      400,
      'validation_error',
      'properties.signup_date',
    );
    expectError(await t.api.post('/v1/contacts', { email: 'not an address' }), 400, 'validation_error', 'email');
    expectError(
      await t.api.post('/v1/contacts', { email: 'bob@example.com', nickname: 'b' }),
      400,
      'validation_error',
      'nickname',
    );

    const up = await t.api.post('/v1/contacts?upsert=true', {
      email: 'ann@example.com',
      last_name: 'Lee',
      properties: { seats: 5 },
    });
    expect(up.status, up.text).to.equal(200);
    expect(up.body).to.include({ id: res.body.id, first_name: 'Ann', last_name: 'Lee' });
    expect(up.body.properties).to.include({ plan: 'pro', seats: 5 });
    const types = (await eventsOf(t.project.id)).map((e) => e.type);
    expect(types.slice(-2)).to.deep.equal(['contact.created', 'contact.updated']);
  });

  it('gets, changes and deletes a contact by id or by any spelling of its address', async function () {
    const c = (await t.api.post('/v1/contacts', { email: 'carol@example.com', properties: { plan: 'team' } })).body;
    expect((await t.api.get(`/v1/contacts/${c.id}`)).body.email).to.equal('carol@example.com');
    expect((await t.api.get(`/v1/contacts/${encodeURIComponent('Carol@EXAMPLE.com')}`)).body.id).to.equal(c.id);
    const patched = await t.api.patch(`/v1/contacts/${c.id}`, {
      properties: { plan: null, seats: 2 },
      unsubscribed: true,
      email: 'carol@example.org',
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.include({ email: 'carol@example.org', unsubscribed: true });
    expect(patched.body.properties).to.deep.equal({ seats: 2 });
    expectError(await t.api.patch(`/v1/contacts/${c.id}`, { email: 'ann@example.com' }), 409, 'contact_exists');
    expectError(
      await t.api.patch(`/v1/contacts/${c.id}`, { properties: { seats: true } }),
      400,
      'validation_error',
      'properties.seats',
    );
    expect((await t.api.delete('/v1/contacts/carol@example.org')).body).to.deep.equal({
      object: 'contact',
      id: c.id,
      email: 'carol@example.org',
      deleted: true,
    });
    expectError(await t.api.get(`/v1/contacts/${c.id}`), 404, 'not_found');
    const deleted = (await eventsOf(t.project.id)).filter((e) => e.type === 'contact.deleted');
    expect(deleted.at(-1)!.data).to.include({ id: c.id, email: 'carol@example.org' });
  });

  it('lists newest first a page at a time, filters by a part of the address, and keeps projects apart', async function () {
    const u = await api.tenant();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await u.api.post('/v1/contacts', { email: `p${i}@list.example` })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: Array<{ id: string }>; next_cursor: string | null } } = await u.api.get(
        `/v1/contacts?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.body.data.length).to.be.at.most(2);
      seen.push(...page.body.data.map((c) => c.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).to.deep.equal([...made].reverse());
    expect((await u.api.get('/v1/contacts?email=P3@')).body.data.map((c: { id: string }) => c.id)).to.deep.equal([
      made[3],
    ]);
    // another project's contact is not found, nor listed
    expectError(await t.api.get(`/v1/contacts/${made[0]}`), 404, 'not_found');
    expectError(await t.api.delete(`/v1/contacts/${made[0]}`), 404, 'not_found');
    expect((await t.api.get('/v1/contacts?limit=100')).body.data.map((c: { id: string }) => c.id)).to.not.include(
      made[0],
    );
    expectError(await u.api.get('/v1/contacts?cursor=nope'), 400, 'validation_error', 'cursor');
  });

  it('makes audiences, adds contacts by id or address (making the missing ones) once each, lists members, removes and deletes', async function () {
    const u = await api.tenant();
    const a = await u.api.post('/v1/audiences', { name: 'Newsletter' });
    expect(a.status, a.text).to.equal(201);
    expect(a.body).to.include({ object: 'audience', name: 'Newsletter', contact_count: 0 });
    expect(a.body.id).to.match(/^aud_[0-9a-z]{26}$/);
    const dora = (await u.api.post('/v1/contacts', { email: 'dora@aud.example' })).body;
    const added = await u.api.post(`/v1/audiences/${a.body.id}/contacts`, {
      contact_ids: [dora.id],
      emails: ['Eve@Aud.example', 'dora@aud.example'],
    });
    expect(added.status, added.text).to.equal(200);
    expect(added.body).to.include({ contact_count: 2, added: 2, created_contacts: 1 });
    expect((await u.api.post(`/v1/audiences/${a.body.id}/contacts`, { emails: ['eve@aud.example'] })).body).to.include({
      added: 0,
      contact_count: 2,
    });
    const eve = (await u.api.get('/v1/contacts/eve@aud.example')).body;
    expect(eve.audiences).to.deep.equal([a.body.id]);
    const members = (await u.api.get(`/v1/contacts?audience_id=${a.body.id}`)).body.data.map(
      (c: { email: string }) => c.email,
    );
    expect(members.sort()).to.deep.equal(['dora@aud.example', 'eve@aud.example']);
    expect((await u.api.get(`/v1/audiences/${a.body.id}`)).body.contact_count).to.equal(2);
    expect((await u.api.get('/v1/audiences')).body.data.map((x: { id: string }) => x.id)).to.deep.equal([a.body.id]);

    expectError(await u.api.post(`/v1/audiences/${a.body.id}/contacts`, {}), 400, 'validation_error', 'contact_ids');
    expectError(
      await u.api.post(`/v1/audiences/${a.body.id}/contacts`, { emails: ['nope'] }),
      400,
      'validation_error',
      'emails[0]',
    );
    // another project's contact, or its audience, is not found
    const theirs = (await t.api.post('/v1/contacts', { email: 'frank@aud.example' })).body;
    expectError(
      await u.api.post(`/v1/audiences/${a.body.id}/contacts`, { contact_ids: [theirs.id] }),
      404,
      'not_found',
    );
    expectError(await t.api.get(`/v1/audiences/${a.body.id}`), 404, 'not_found');
    expectError(
      await t.api.post(`/v1/audiences/${a.body.id}/contacts`, { contact_ids: [theirs.id] }),
      404,
      'not_found',
    );

    expect((await u.api.delete(`/v1/audiences/${a.body.id}/contacts/eve@aud.example`)).body).to.include({
      contact_id: eve.id,
      deleted: true,
    });
    expectError(await u.api.delete(`/v1/audiences/${a.body.id}/contacts/eve@aud.example`), 404, 'not_found');
    expect((await u.api.delete(`/v1/audiences/${a.body.id}`)).body).to.deep.equal({
      object: 'audience',
      id: a.body.id,
      deleted: true,
    });
    expectError(await u.api.get(`/v1/audiences/${a.body.id}`), 404, 'not_found');
    // the contacts stay, out of the deleted audience
    expect((await u.api.get(`/v1/contacts/${dora.id}`)).body.audiences).to.deep.equal([]);
  });

  it('saves segments checked at creation, lists their contacts now, and keeps what they use from being deleted', async function () {
    const u = await api.tenant();
    await u.api.post('/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' });
    await u.api.post('/v1/contact-properties', { key: 'signup_date', type: 'date' });
    const aud = (await u.api.post('/v1/audiences', { name: 'Customers' })).body;
    const people = [
      { email: 'pro1@seg.example', properties: { plan: 'pro', signup_date: '2026-02-01' } },
      { email: 'pro2@seg.example', properties: { plan: 'pro', signup_date: '2025-11-01' } },
      { email: 'pro3@seg.example', properties: { plan: 'pro', signup_date: '2026-03-01' } },
      { email: 'free@seg.example', properties: {} },
    ];
    for (const p of people) await u.api.post('/v1/contacts', p);
    await u.api.post(`/v1/audiences/${aud.id}/contacts`, { emails: ['pro1@seg.example', 'free@seg.example'] });

    const bad = await u.api.post('/v1/segments', { name: 'x', filter: "plan == 'pro' and colour == 'red'" });
    expectError(bad, 400, 'validation_error', 'filter');
    expect(bad.body.error.message).to.match(/line 1, column 19/);
    expectError(
      await u.api.post('/v1/segments', { name: 'x', filter: 'plan', audience_id: 'aud_nope' }),
      404,
      'not_found',
    );

    const seg = await u.api.post('/v1/segments', {
      name: 'Recent pro',
      filter: "plan == 'pro' and signup_date >= '2026-01-01'",
    });
    expect(seg.status, seg.text).to.equal(201);
    expect(seg.body).to.include({ object: 'segment', name: 'Recent pro', audience_id: null });
    expect(seg.body.id).to.match(/^seg_[0-9a-z]{26}$/);
    const emails = async (path: string) => (await u.api.get(path)).body.data.map((c: { email: string }) => c.email);
    expect(await emails(`/v1/segments/${seg.body.id}/contacts`)).to.deep.equal([
      'pro3@seg.example',
      'pro1@seg.example',
    ]);
    expect(await emails(`/v1/contacts?segment_id=${seg.body.id}`)).to.deep.equal([
      'pro3@seg.example',
      'pro1@seg.example',
    ]);
    const first = (await u.api.get(`/v1/segments/${seg.body.id}/contacts?limit=1`)).body;
    expect(first.data.map((c: { email: string }) => c.email)).to.deep.equal(['pro3@seg.example']);
    expect(await emails(`/v1/segments/${seg.body.id}/contacts?limit=1&cursor=${first.next_cursor}`)).to.deep.equal([
      'pro1@seg.example',
    ]);
    // dynamic: a change of a contact changes the segment
    await u.api.patch('/v1/contacts/pro2@seg.example', { properties: { signup_date: '2026-04-01' } });
    expect(await emails(`/v1/segments/${seg.body.id}/contacts`)).to.include('pro2@seg.example');
    // within an audience; the fallback counts for a contact without a value
    const free = (
      await u.api.post('/v1/segments', { name: 'Free customers', audience_id: aud.id, filter: "plan == 'free'" })
    ).body;
    expect(await emails(`/v1/segments/${free.id}/contacts`)).to.deep.equal(['free@seg.example']);

    expectError(await u.api.delete('/v1/contact-properties/signup_date'), 409, 'conflict');
    expectError(await u.api.delete(`/v1/audiences/${aud.id}`), 409, 'conflict');
    expectError(await t.api.get(`/v1/segments/${seg.body.id}`), 404, 'not_found');
    expectError(await t.api.get(`/v1/segments/${seg.body.id}/contacts`), 404, 'not_found');
    expectError(
      await u.api.get(`/v1/contacts?segment_id=${seg.body.id}&email=pro`),
      400,
      'validation_error',
      'segment_id',
    );
    expect((await u.api.get('/v1/segments')).body.data.map((x: { id: string }) => x.id)).to.deep.equal([
      free.id,
      seg.body.id,
    ]);
    expect((await u.api.delete(`/v1/segments/${seg.body.id}`)).body).to.deep.equal({
      object: 'segment',
      id: seg.body.id,
      deleted: true,
    });
    expect((await u.api.delete('/v1/contact-properties/signup_date')).status).to.equal(200);
  });

  it('makes opt-in and opt-out topics; a contact shows its subscription to each, its own choice or the default', async function () {
    const u = await api.tenant();
    const news = await u.api.post('/v1/topics', {
      name: 'Product news',
      description: 'What we ship',
      default: 'opt_out',
    });
    expect(news.status, news.text).to.equal(201);
    expect(news.body).to.include({
      object: 'topic',
      name: 'Product news',
      description: 'What we ship',
      default: 'opt_out',
    });
    expect(news.body.id).to.match(/^top_[0-9a-z]{26}$/);
    const beta = (await u.api.post('/v1/topics', { name: 'Beta invites', default: 'opt_in' })).body;
    expectError(await u.api.post('/v1/topics', { name: 'x', default: 'maybe' }), 400, 'validation_error', 'default');

    const gus = (await u.api.post('/v1/contacts', { email: 'gus@topic.example' })).body;
    expect(gus.topics).to.deep.equal({ [news.body.id]: true, [beta.id]: false });
    const chose = await u.api.patch(`/v1/contacts/${gus.id}`, { topics: { [news.body.id]: false, [beta.id]: true } });
    expect(chose.status, chose.text).to.equal(200);
    expect(chose.body.topics).to.deep.equal({ [news.body.id]: false, [beta.id]: true });
    expect((await u.api.get('/v1/contacts/gus@topic.example')).body.topics).to.deep.equal({
      [news.body.id]: false,
      [beta.id]: true,
    });
    const hal = (await u.api.post('/v1/contacts', { email: 'hal@topic.example', topics: { [beta.id]: true } })).body;
    expect(hal.topics).to.deep.equal({ [news.body.id]: true, [beta.id]: true });

    const theirs = (await t.api.post('/v1/topics', { name: 'Theirs', default: 'opt_in' })).body;
    expectError(
      await u.api.patch(`/v1/contacts/${gus.id}`, { topics: { [theirs.id]: true } }),
      400,
      'validation_error',
      `topics.${theirs.id}`,
    );
    expectError(await u.api.get(`/v1/topics/${theirs.id}`), 404, 'not_found');
    expect((await u.api.get('/v1/topics')).body.data.map((x: { id: string }) => x.id)).to.deep.equal([
      beta.id,
      news.body.id,
    ]);
    expect((await u.api.delete(`/v1/topics/${beta.id}`)).body).to.deep.equal({
      object: 'topic',
      id: beta.id,
      deleted: true,
    });
    expect((await u.api.get(`/v1/contacts/${gus.id}`)).body.topics).to.deep.equal({ [news.body.id]: false });
  });

  it('refuses property keys that would hide a field, impossible dates and NUL; an address may start with con_', async function () {
    const u = await api.tenant();
    for (const key of ['email', 'created_at', '__proto__', 'constructor'])
      expectError(await u.api.post('/v1/contact-properties', { key, type: 'string' }), 400, 'validation_error', 'key');
    await u.api.post('/v1/contact-properties', { key: 'renewal', type: 'date' });
    expectError(
      await u.api.post('/v1/contacts', { email: 'ivy@x.example', properties: { renewal: '2026-02-30T10:00:00Z' } }),
      400,
      'validation_error',
      'properties.renewal',
    );
    expectError(
      await u.api.post('/v1/contacts', { email: 'ivy@x.example', properties: { renewal: '2026-13-01' } }),
      400,
      'validation_error',
      'properties.renewal',
    );
    expectError(
      await u.api.post('/v1/contacts', { email: 'ivy@x.example', first_name: 'I\u0000vy' }),
      400,
      'validation_error',
      'first_name',
    );
    expectError(await u.api.post('/v1/audiences', { name: 'a\u0000b' }), 400, 'validation_error', 'name');
    const con = (await u.api.post('/v1/contacts', { email: 'con_ann@x.example' })).body;
    expect((await u.api.get('/v1/contacts/con_ann@x.example')).body.id).to.equal(con.id);
    expect(
      (await u.api.post('/v1/contacts?upsert=true', { email: 'con_ann@x.example', first_name: 'Ann' })).status,
    ).to.equal(200);
    expectError(await u.api.get('/v1/contacts?audience_id=aud_nope'), 404, 'not_found');
  });

  it('announces a contact joining or leaving an audience as contact.updated, and pages audiences, segments and topics', async function () {
    const u = await api.tenant();
    const jo = (await u.api.post('/v1/contacts', { email: 'jo@page.example' })).body;
    const a = (await u.api.post('/v1/audiences', { name: 'A' })).body;
    await u.api.post(`/v1/audiences/${a.id}/contacts`, { contact_ids: [jo.id] });
    await u.api.delete(`/v1/audiences/${a.id}/contacts/${jo.id}`);
    const updates = (await eventsOf(u.project.id))
      .filter((e) => e.type === 'contact.updated' && e.data.id === jo.id)
      .map((e) => e.data.audiences);
    expect(updates).to.deep.equal([[a.id], []]);

    for (const [path, make] of [
      ['/v1/audiences', (i: number) => ({ name: `a${i}` })],
      ['/v1/segments', (i: number) => ({ name: `s${i}`, filter: 'email' })],
      ['/v1/topics', (i: number) => ({ name: `t${i}`, default: 'opt_in' })],
    ] as const) {
      const before = (await u.api.get(`${path}?limit=100`)).body.data.map((x: { id: string }) => x.id);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) made.push((await u.api.post(path, make(i))).body.id);
      const all = [...made.reverse(), ...before];
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { data: Array<{ id: string }>; next_cursor: string | null } } = await u.api.get(
          `${path}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...page.body.data.map((x) => x.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen, path).to.deep.equal(all);
    }
  });

  it('adds one contact for an address two requests add at once', async function () {
    const u = await api.tenant();
    const a = (await u.api.post('/v1/audiences', { name: 'Race' })).body;
    const both = await Promise.all(
      [1, 2].map(() => u.api.post(`/v1/audiences/${a.id}/contacts`, { emails: ['race@x.example'] })),
    );
    expect(both.map((r) => r.status)).to.deep.equal([200, 200]);
    expect((await u.api.get('/v1/contacts?email=race@')).body.data).to.have.length(1);
    expect((await u.api.get(`/v1/audiences/${a.id}`)).body.contact_count).to.equal(1);
  });

  it('needs contacts:manage, which a key made with every scope holds', async function () {
    const k = await t.newKey({ scopes: ['emails:send'] });
    expectError(await k.api.get('/v1/contacts'), 403, 'forbidden');
    expectError(await k.api.post('/v1/contact-properties', { key: 'x', type: 'string' }), 403, 'forbidden');
    expectError(await k.api.post('/v1/audiences', { name: 'x' }), 403, 'forbidden');
    expectError(await k.api.post('/v1/segments', { name: 'x', filter: 'email' }), 403, 'forbidden');
    expectError(await k.api.get('/v1/topics'), 403, 'forbidden');
    expectError(await api.anonymous.get('/v1/contacts'), 401, 'unauthorized');
  });
});
