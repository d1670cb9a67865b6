import { expect } from 'chai';
import { Resend } from 'resend';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';

// Resend's own Node SDK against /resend's contacts, segments (our audiences) and topics
// (docs/resend.md): the calls of Resend's documentation, unchanged but for the base URL, what
// Resend's documentation and types say each returns, and the same things read back through /v1.

eachDatabase("Resend's SDK against /resend: contacts, segments and topics", (db) => {
  let api: TestApi;
  before(async function () {
    api = await startTestApi(db().store);
  });
  after(async function () {
    await api.stop();
  });

  /** a project of its own for each test, with Resend's client on its key */
  const project = async (): Promise<{ t: Tenant; resend: Resend }> => {
    const t = await api.tenant();
    return { t, resend: new Resend(t.key, { baseUrl: `${api.baseUrl}/resend` }) };
  };
  /** the answer's data, once its error is known to be null */
  const ok = <T>(r: { data: T | null; error: unknown }): T => {
    expect(r.error).to.equal(null);
    return r.data!;
  };

  it('creates, gets, lists, renames and removes segments, which are our audiences', async function () {
    const { t, resend } = await project();
    const made = ok(await resend.segments.create({ name: 'Registered Users' }));
    expect(made).to.deep.include({ object: 'segment', name: 'Registered Users' });
    expect(made.id).to.match(/^aud_/);
    expect((await t.api.get(`/v1/audiences/${made.id}`)).body).to.include({ name: 'Registered Users' });
    const got = ok(await resend.segments.get(made.id));
    expect(got).to.deep.include({ object: 'segment', id: made.id, name: 'Registered Users' });
    expect(Date.parse(got.created_at)).to.be.closeTo(Date.now(), 60_000);
    // resend.audiences is resend.segments: the same calls
    const other = ok(await resend.audiences.create({ name: 'Other' }));
    expect(ok(await resend.segments.update(other.id, { name: 'Renamed' }))).to.deep.equal({
      object: 'segment',
      id: other.id,
    });
    expect((await t.api.get(`/v1/audiences/${other.id}`)).body.name).to.equal('Renamed');
    const third = ok(await resend.segments.create({ name: 'Third' }));
    const first = ok(await resend.segments.list({ limit: 2 }));
    expect(first).to.deep.include({ object: 'list', has_more: true });
    expect(first.data.map((s) => s.id)).to.deep.equal([third.id, other.id]);
    expect(first.data[1]).to.have.keys('id', 'name', 'created_at');
    const older = ok(await resend.segments.list({ limit: 2, after: other.id }));
    expect(older).to.deep.include({ has_more: false });
    expect(older.data.map((s) => s.id)).to.deep.equal([made.id]);
    const newer = ok(await resend.segments.list({ limit: 1, before: other.id }));
    expect(newer.data.map((s) => s.id)).to.deep.equal([third.id]);
    expect(ok(await resend.segments.remove(third.id))).to.deep.equal({
      object: 'segment',
      id: third.id,
      deleted: true,
    });
    expect((await resend.segments.get(third.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
    // the older API's paths answer in its words
    const legacy = await t.api.post('/resend/audiences', { name: 'Old style' });
    expect(legacy.body).to.deep.include({ object: 'audience', name: 'Old style' });
  });

  it('creates a contact with properties, segments and topics, and finds it by an address with a +', async function () {
    const { t, resend } = await project();
    await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string' });
    await t.api.post('/v1/contact-properties', { key: 'seats', type: 'number' });
    const segment = ok(await resend.segments.create({ name: 'Customers' }));
    const topic = ok(await resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' }));
    const made = ok(
      await resend.contacts.create({
        email: 'Ann+news@Example.com',
        firstName: 'Ann',
        lastName: 'Lee',
        unsubscribed: false,
        properties: { plan: 'pro', seats: 3 },
        segments: [{ id: segment.id }],
        topics: [{ id: topic.id, subscription: 'opt_out' }],
      }),
    );
    expect(made.object).to.equal('contact');
    expect(made.id).to.match(/^con_/);
    const v1 = (await t.api.get(`/v1/contacts/${made.id}`)).body;
    expect(v1).to.deep.include({
      email: 'ann+news@example.com',
      audiences: [segment.id],
      topics: { [topic.id]: false },
    });
    // the SDK puts the address in the path as it is: a + stays a +
    const byEmail = ok(await resend.contacts.get({ email: 'ann+news@example.com' }));
    expect(byEmail).to.deep.equal({
      object: 'contact',
      id: made.id,
      email: 'ann+news@example.com',
      first_name: 'Ann',
      last_name: 'Lee',
      unsubscribed: false,
      created_at: v1.created_at,
      properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 3 } },
    });
    expect(ok(await resend.contacts.get(made.id)).email).to.equal('ann+news@example.com');
    expect(ok(await resend.contacts.get({ id: made.id })).id).to.equal(made.id);
    // %2B is a + too
    expect((await t.api.get('/resend/contacts/ann%2Bnews@example.com')).body.id).to.equal(made.id);
  });

  it('updates a contact (null clears), unsubscribes it from all broadcasts, lists and removes it', async function () {
    const { t, resend } = await project();
    await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string' });
    const segment = ok(await resend.segments.create({ name: 'Customers' }));
    const a = ok(await resend.contacts.create({ email: 'a+1@example.com', firstName: 'A', properties: { plan: 'x' } }));
    const b = ok(await resend.contacts.create({ email: 'b@example.com', segments: [{ id: segment.id }] }));
    const c = ok(await resend.contacts.create({ email: 'c@example.com', segments: [{ id: segment.id }] }));
    const changed = ok(
      await resend.contacts.update({
        email: 'a+1@example.com',
        firstName: null,
        unsubscribed: true,
        properties: { plan: null },
      }),
    );
    expect(changed).to.deep.equal({ object: 'contact', id: a.id });
    expect((await t.api.get(`/v1/contacts/${a.id}`)).body).to.deep.include({
      first_name: null,
      unsubscribed: true,
      properties: {},
    });
    const all = ok(await resend.contacts.list({ limit: 2 }));
    expect(all).to.deep.include({ object: 'list', has_more: true });
    expect(all.data.map((x) => x.id)).to.deep.equal([c.id, b.id]);
    expect(all.data[0]).to.have.keys('id', 'email', 'first_name', 'last_name', 'unsubscribed', 'created_at');
    expect(ok(await resend.contacts.list({ limit: 2, after: b.id })).data.map((x) => x.id)).to.deep.equal([a.id]);
    const newer = ok(await resend.contacts.list({ limit: 1, before: b.id }));
    expect(newer).to.deep.include({ has_more: false });
    expect(newer.data.map((x) => x.id)).to.deep.equal([c.id]);
    const members = ok(await resend.contacts.list({ segmentId: segment.id }));
    expect(members.data.map((x) => x.id)).to.deep.equal([c.id, b.id]);
    expect(ok(await resend.contacts.list({ audienceId: segment.id })).data).to.have.length(2);
    expect(ok(await resend.contacts.remove({ email: 'a+1@example.com' }))).to.deep.include({
      object: 'contact',
      contact: a.id,
      deleted: true,
    });
    expect(ok(await resend.contacts.remove(b.id))).to.deep.include({ contact: b.id, deleted: true });
    // Resend's Go SDK names the contact by id in the path and sends `email`, its new address, in the body
    const moved = await t.api.patch(`/resend/contacts/${c.id}`, { id: c.id, email: 'c.new@example.com' });
    expect(moved.body, moved.text).to.deep.equal({ object: 'contact', id: c.id });
    expect(ok(await resend.contacts.get({ email: 'c.new@example.com' })).id).to.equal(c.id);
    expect((await resend.contacts.get(a.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
  });

  it('adds a contact to segments, lists them and removes it from one (the contact stays)', async function () {
    const { t, resend } = await project();
    const one = ok(await resend.segments.create({ name: 'One' }));
    const two = ok(await resend.segments.create({ name: 'Two' }));
    const c = ok(await resend.contacts.create({ email: 'seg+x@example.com' }));
    expect(ok(await resend.contacts.segments.add({ email: 'seg+x@example.com', segmentId: one.id }))).to.deep.equal({
      id: one.id,
    });
    ok(await resend.contacts.segments.add({ contactId: c.id, segmentId: two.id }));
    const listed = ok(await resend.contacts.segments.list({ email: 'seg+x@example.com' }));
    expect(listed).to.deep.include({ object: 'list', has_more: false });
    expect(listed.data).to.deep.equal([
      { id: two.id, name: 'Two', created_at: listed.data[0].created_at },
      { id: one.id, name: 'One', created_at: listed.data[1].created_at },
    ]);
    expect(ok(await resend.contacts.segments.list({ contactId: c.id, limit: 1 })).has_more).to.equal(true);
    const removed = ok(await resend.contacts.segments.remove({ email: 'seg+x@example.com', segmentId: one.id }));
    expect(removed).to.deep.equal({ id: one.id, audienceId: one.id, deleted: true });
    expect((await t.api.get(`/v1/contacts/${c.id}`)).body.audiences).to.deep.equal([two.id]);
    const again = await resend.contacts.segments.remove({ contactId: c.id, segmentId: one.id });
    expect(again.error).to.deep.include({ name: 'not_found', statusCode: 404 });
  });

  it('creates, gets, updates and removes contacts the legacy way, through an audience', async function () {
    const { t, resend } = await project();
    const aud = ok(await resend.audiences.create({ name: 'Legacy' }));
    const elsewhere = ok(await resend.audiences.create({ name: 'Elsewhere' }));
    const made = ok(await resend.contacts.create({ audienceId: aud.id, email: 'old+1@example.com', firstName: 'Old' }));
    expect(made.object).to.equal('contact');
    expect((await t.api.get(`/v1/contacts/${made.id}`)).body.audiences).to.deep.equal([aud.id]);
    const got = ok(await resend.contacts.get({ audienceId: aud.id, email: 'old+1@example.com' }));
    expect(got).to.deep.include({ object: 'contact', id: made.id, first_name: 'Old' });
    const notThere = await resend.contacts.get({ audienceId: elsewhere.id, id: made.id });
    expect(notThere.error).to.deep.include({ name: 'not_found', statusCode: 404 });
    ok(await resend.contacts.update({ audienceId: aud.id, email: 'old+1@example.com', lastName: 'Timer' }));
    expect((await t.api.get(`/v1/contacts/${made.id}`)).body.last_name).to.equal('Timer');
    // the same address in another audience: the one contact joins it too, as it is given
    const again = ok(
      await resend.contacts.create({ audienceId: elsewhere.id, email: 'old+1@example.com', firstName: 'New' }),
    );
    expect(again.id).to.equal(made.id);
    expect((await t.api.get(`/v1/contacts/${made.id}`)).body).to.deep.include({
      first_name: 'New',
      audiences: [aud.id, elsewhere.id],
    });
    const removed = ok(await resend.contacts.remove({ audienceId: aud.id, email: 'old+1@example.com' }));
    expect(removed).to.deep.include({ object: 'contact', contact: made.id, deleted: true });
    expect((await t.api.get(`/v1/contacts/${made.id}`)).body.audiences).to.deep.equal([elsewhere.id]);
    const legacyList = await t.api.get(`/resend/audiences/${elsewhere.id}/contacts`);
    expect(legacyList.body.data.map((x: { id: string }) => x.id)).to.deep.equal([made.id]);
  });

  it("maps topics' opt_in both ways: Resend's opt_in is our subscribed, our unsubscribed Resend's opt_out", async function () {
    const { t, resend } = await project();
    const optIn = ok(
      await resend.topics.create({ name: 'Product news', description: 'Monthly', defaultSubscription: 'opt_in' }),
    );
    expect(optIn).to.have.keys('id');
    expect((await t.api.get(`/v1/topics/${optIn.id}`)).body).to.include({ default_subscription: 'subscribed' });
    const ours = (await t.api.post('/v1/topics', { name: 'Offers', default_subscription: 'unsubscribed' })).body;
    expect(ok(await resend.topics.get(ours.id))).to.deep.include({
      id: ours.id,
      name: 'Offers',
      default_subscription: 'opt_out',
    });
    const got = ok(await resend.topics.get(optIn.id));
    expect(got).to.deep.include({ name: 'Product news', description: 'Monthly', default_subscription: 'opt_in' });
    expect(Date.parse(got.created_at)).to.be.closeTo(Date.now(), 60_000);
    const list = ok(await resend.topics.list());
    expect(list).to.deep.include({ object: 'list', has_more: false });
    expect(list.data.map((x) => [x.id, x.default_subscription])).to.deep.equal([
      [ours.id, 'opt_out'],
      [optIn.id, 'opt_in'],
    ]);
    // a contact who never chose: subscribed to the opt_in topic, not to the opt_out one
    const c = ok(await resend.contacts.create({ email: 'never+chose@example.com' }));
    const subs = ok(await resend.contacts.topics.list({ email: 'never+chose@example.com' }));
    expect(subs).to.deep.include({ object: 'list', has_more: false });
    expect(subs.data).to.deep.equal([
      { id: ours.id, name: 'Offers', description: null, subscription: 'opt_out' },
      { id: optIn.id, name: 'Product news', description: 'Monthly', subscription: 'opt_in' },
    ]);
    expect((await t.api.get(`/v1/contacts/${c.id}`)).body.topics).to.deep.equal({ [optIn.id]: true, [ours.id]: false });
  });

  it("changes a contact's topic choices from the SDK's bare array and from {topics}", async function () {
    const { t, resend } = await project();
    const a = ok(await resend.topics.create({ name: 'A', defaultSubscription: 'opt_in' }));
    const b = ok(await resend.topics.create({ name: 'B', defaultSubscription: 'opt_out' }));
    const c = ok(await resend.contacts.create({ email: 'choose+r@example.com' }));
    const done = ok(
      await resend.contacts.topics.update({
        email: 'choose+r@example.com',
        topics: [
          { id: a.id, subscription: 'opt_out' },
          { id: b.id, subscription: 'opt_in' },
        ],
      }),
    );
    expect(done).to.deep.equal({ id: c.id });
    expect((await t.api.get(`/v1/contacts/${c.id}`)).body.topics).to.deep.equal({ [a.id]: false, [b.id]: true });
    const docs = await t.api.patch(`/resend/contacts/${c.id}/topics`, {
      topics: [{ id: a.id, subscription: 'opt_in' }],
    });
    expect(docs.status, docs.text).to.equal(200);
    const subs = ok(await resend.contacts.topics.list({ id: c.id }));
    expect(subs.data.map((x) => [x.id, x.subscription])).to.deep.equal([
      [b.id, 'opt_in'],
      [a.id, 'opt_in'],
    ]);
    const unknown = await resend.contacts.topics.update({
      id: c.id,
      topics: [{ id: 'top_nope', subscription: 'opt_in' }],
    });
    expect(unknown.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
  });

  it("updates a topic's name and description, keeping its default, and removes it", async function () {
    const { t, resend } = await project();
    const topic = ok(await resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' }));
    expect(ok(await resend.topics.update({ id: topic.id, name: 'Newsletter', description: 'Monthly' }))).to.deep.equal({
      id: topic.id,
    });
    expect(ok(await resend.topics.get(topic.id))).to.deep.include({
      name: 'Newsletter',
      description: 'Monthly',
      default_subscription: 'opt_out',
    });
    // the same through /v1
    expect((await t.api.get(`/v1/topics/${topic.id}`)).body).to.deep.include({
      name: 'Newsletter',
      default_subscription: 'unsubscribed',
    });
    expect(ok(await resend.topics.remove(topic.id))).to.deep.equal({ object: 'topic', id: topic.id, deleted: true });
    expect((await resend.topics.get(topic.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
  });

  it('refuses as Resend does: an unknown segment, an undeclared property, an address taken', async function () {
    const { t, resend } = await project();
    const missing = await resend.contacts.create({ email: 'x@example.com', segments: [{ id: 'aud_nope' }] });
    expect(missing.error).to.deep.include({ name: 'not_found', statusCode: 404 });
    // nothing was made
    expect((await t.api.get('/v1/contacts/x@example.com')).status).to.equal(404);
    const undeclared = await resend.contacts.create({ email: 'x@example.com', properties: { colour: 'blue' } });
    expect(undeclared.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(undeclared.error!.message).to.match(/^properties\.colour: /);
    ok(await resend.contacts.create({ email: 'x@example.com' }));
    const twice = await resend.contacts.create({ email: 'X@example.com' });
    expect(twice.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    // contact imports are not available here (posthorn contacts import reads the file)
    for (const refused of [await resend.contacts.imports.list(), await resend.contacts.imports.get('imp_1')]) {
      expect(refused.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
      expect(refused.error!.message).to.match(/^contacts\.imports: not available/);
    }
    const upload = await resend.contacts.imports.create({ file: new Blob(['email\nx@example.com\n']) });
    expect(upload.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    const bad = await resend.contacts.create({ email: 'not an address' });
    expect(bad.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(bad.error!.message).to.match(/^email: /);
  });
});
