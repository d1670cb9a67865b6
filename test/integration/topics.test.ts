import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';

const content = { from: 'News <news@example.com>', subject: 'Hello', html: '<p>Hello</p>' };

eachDatabase('topics: default_subscription, and the deprecated default beside it', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store, { http: { public_url: 'https://mail.top.test' } }, { roles: { jobs: true } });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  const topic = async (body: Record<string, unknown>) => {
    const res = await t.api.post('/v1/topics', { name: 'Product news', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; default_subscription: string; default: string };
  };
  /** a new audience of a contact who never chose and one who chose the topic, and who of them a broadcast on it reaches */
  const reached = async (topicId: string) => {
    const aud = (await t.api.post('/v1/audiences', { name: `on ${topicId}` })).body.id as string;
    const ids: string[] = [];
    for (const [email, topics] of [
      [`never-${topicId}@top.test`, {}],
      [`chose-${topicId}@top.test`, { [topicId]: true }],
    ] as const) {
      const res = await t.api.post('/v1/contacts', { email, topics });
      expect(res.status, res.text).to.equal(201);
      ids.push(res.body.id);
    }
    await t.api.post(`/v1/audiences/${aud}/contacts`, { contact_ids: ids });
    const b = (await t.api.post('/v1/broadcasts', { name: 'b', ...content, audience_id: aud, topic_id: topicId })).body;
    expect((await t.api.post(`/v1/broadcasts/${b.id}/send`, {})).status).to.equal(200);
    await waitFor(
      async () => ((await t.api.get(`/v1/broadcasts/${b.id}`)).body.status === 'sent' ? true : null),
      20_000,
      `broadcast ${b.id} sent`,
    );
    const rows = (await db().store.knex('emails').select('to_list').where({ broadcast_id: b.id })) as Array<{
      to_list: string;
    }>;
    return rows.map((r) => (JSON.parse(r.to_list) as string[])[0].split('-')[0]).sort();
  };
  const neverChose = async (topicId: string) =>
    (await t.api.get(`/v1/contacts/never-${topicId}@top.test`)).body.topics[topicId] as boolean;

  context('when default_subscription is subscribed', function () {
    it('a contact who never chose is subscribed and gets its broadcasts; the answer says opt_out in the old words', async function () {
      this.timeout(60_000); // the jobs role fans the broadcasts out: slow on a busy machine
      const made = await topic({ default_subscription: 'subscribed' });
      expect(made).to.include({ default_subscription: 'subscribed', default: 'opt_out' });
      expect(await reached(made.id)).to.deep.equal(['chose', 'never']);
      expect(await neverChose(made.id)).to.equal(true);
    });
  });

  context('when default_subscription is unsubscribed', function () {
    it('only a contact who subscribed gets its broadcasts; one who never chose shows as not subscribed', async function () {
      this.timeout(60_000); // the jobs role fans the broadcasts out: slow on a busy machine
      const made = await topic({ default_subscription: 'unsubscribed' });
      expect(made).to.include({ default_subscription: 'unsubscribed', default: 'opt_in' });
      expect(await reached(made.id)).to.deep.equal(['chose']);
      expect(await neverChose(made.id)).to.equal(false);
    });
  });

  context('when only the deprecated default is sent', function () {
    it('keeps its meaning (opt_in: only those who subscribed) and shows both fields on create, get and list', async function () {
      this.timeout(60_000); // the jobs role fans the broadcasts out: slow on a busy machine
      const optIn = await topic({ default: 'opt_in' });
      expect(optIn).to.include({ default_subscription: 'unsubscribed', default: 'opt_in' });
      expect(await reached(optIn.id)).to.deep.equal(['chose']);
      const optOut = await topic({ default: 'opt_out' });
      expect(optOut).to.include({ default_subscription: 'subscribed', default: 'opt_out' });
      expect(await reached(optOut.id)).to.deep.equal(['chose', 'never']);

      expect((await t.api.get(`/v1/topics/${optIn.id}`)).body).to.deep.equal(optIn);
      const listed = (await t.api.get('/v1/topics?limit=100')).body.data as Array<Record<string, unknown>>;
      expect(listed.find((x) => x.id === optOut.id)).to.deep.equal(optOut);
      for (const x of listed)
        expect(`${String(x.default_subscription)} ${String(x.default)}`).to.be.oneOf([
          'subscribed opt_out',
          'unsubscribed opt_in',
        ]);
    });
  });

  context('when both are sent', function () {
    it('takes them when they agree', async function () {
      expect(await topic({ default_subscription: 'subscribed', default: 'opt_out' })).to.include({
        default_subscription: 'subscribed',
        default: 'opt_out',
      });
      expect(await topic({ default_subscription: 'unsubscribed', default: 'opt_in' })).to.include({
        default_subscription: 'unsubscribed',
        default: 'opt_in',
      });
    });

    it('refuses them, naming default_subscription, when they disagree (Resend’s opt_in read as ours), and makes nothing', async function () {
      const before = (await t.api.get('/v1/topics?limit=100')).body.data.length as number;
      for (const [default_subscription, old] of [
        ['subscribed', 'opt_in'],
        ['unsubscribed', 'opt_out'],
      ])
        expectError(
          await t.api.post('/v1/topics', { name: 'x', default_subscription, default: old }),
          400,
          'validation_error',
          'default_subscription',
        );
      expect((await t.api.get('/v1/topics?limit=100')).body.data).to.have.length(before);
    });
  });

  it('refuses a topic without either, naming default_subscription', async function () {
    const err = expectError(await t.api.post('/v1/topics', { name: 'x' }), 400, 'validation_error');
    expect(err.field).to.equal('default_subscription');
    expect(err.message).to.include('subscribed').and.include('unsubscribed');
  });

  it('refuses a value not of its field, naming the field (Resend’s opt_in is not a default_subscription)', async function () {
    for (const bad of ['opt_in', 'opt_out', 'Subscribed', '', 1, null])
      expectError(
        await t.api.post('/v1/topics', { name: 'x', default_subscription: bad }),
        400,
        'validation_error',
        'default_subscription',
      );
    for (const bad of ['subscribed', 'maybe', null])
      expectError(await t.api.post('/v1/topics', { name: 'x', default: bad }), 400, 'validation_error', 'default');
  });

  it("changes a name and a description with PATCH, never the default; another project's topic is not found", async function () {
    const made = await topic({ default_subscription: 'subscribed', description: 'Sometimes' });
    const r = await t.api.patch(`/v1/topics/${made.id}`, { name: 'Product updates', description: null });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.deep.include({ name: 'Product updates', description: null, default_subscription: 'subscribed' });
    expect((await t.api.get(`/v1/topics/${made.id}`)).body).to.deep.include({ name: 'Product updates' });
    expectError(
      await t.api.patch(`/v1/topics/${made.id}`, { default_subscription: 'unsubscribed' }),
      400,
      'validation_error',
      'default_subscription',
    );
    expectError(await t.api.patch(`/v1/topics/${made.id}`, { name: '' }), 400, 'validation_error', 'name');
    const other = await api.tenant();
    expectError(await other.api.patch(`/v1/topics/${made.id}`, { name: 'Mine' }), 404, 'not_found');
  });
});
