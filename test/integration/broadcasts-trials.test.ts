import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';
const content = {
  from: 'News <news@example.com>',
  subject: 'Hello {{contact.first_name | there}}',
  html: '<p>Hi {{contact.first_name | there}}, on {{contact.plan}}.</p><p><a href="{{preferences_url}}">Preferences</a></p>',
};

eachDatabase('broadcasts: preview per contact, test email, report (issue 46)', (db) => {
  let api: TestApi;
  let t: Tenant;
  let audience: string;
  let ann: string;
  before(async function () {
    api = await startTestApi(
      db().store,
      { http: { public_url: 'https://mail.trial.test' } },
      { roles: { jobs: true } },
    );
    t = await api.tenant();
    expect(
      (await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' })).status,
    ).to.equal(201);
    audience = (await t.api.post('/v1/audiences', { name: 'Readers' })).body.id;
    const made = await Promise.all(
      [
        { email: 'ann@example.com', first_name: 'Ann', properties: { plan: 'pro' } },
        { email: `bounced@${SIM}` },
        { email: `complained@${SIM}`, first_name: 'Cy' },
        { email: `delivered@${SIM}`, first_name: 'Di' },
      ].map((c) => t.api.post('/v1/contacts', c)),
    );
    ann = made[0].body.id;
    const added = await t.api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: made.map((m) => m.body.id) });
    expect(added.status, added.text).to.be.oneOf([200, 201]);
  });
  after(async function () {
    await api.stop();
  });
  const draft = async (extra: Record<string, unknown> = {}) => {
    const res = await t.api.post('/v1/broadcasts', { name: 'Trial', ...content, audience_id: audience, ...extra });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  };

  it('renders the subject, html and text a contact would get, with its values, fallbacks and preference link', async function () {
    const id = await draft();
    const res = await t.api.post(`/v1/broadcasts/${id}/preview`, { contact_id: ann });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({
      object: 'broadcast_preview',
      broadcast_id: id,
      contact_id: ann,
      to: 'ann@example.com',
    });
    expect(res.body.subject).to.equal('Hello Ann');
    expect(res.body.html)
      .to.include('Hi Ann, on pro.')
      .and.match(/href="https:\/\/mail\.trial\.test\/p\/[^"]+"/);
    const dee = (await t.api.get(`/v1/contacts/complained@${SIM}`)).body.id;
    const other = await t.api.post(`/v1/broadcasts/${id}/preview`, { contact_id: dee });
    expect(other.body.subject).to.equal('Hello Cy');
    expect(other.body.html).to.include('on free.');
  });

  it('renders a template broadcast with the version it names', async function () {
    const tpl = await t.api.post('/v1/templates', {
      id: 'trial-news',
      name: 'News',
      subject: 'News for {{contact.email}}',
      html: '<p>{{contact.first_name}}</p>',
      variables: { contact: { type: 'object', required: true } },
    });
    expect(tpl.status, tpl.text).to.equal(201);
    const id = await draft({ subject: undefined, html: undefined, template_id: 'trial-news', template_version: 1 });
    const res = await t.api.post(`/v1/broadcasts/${id}/preview`, { contact_id: ann });
    expect(res.body).to.include({ subject: 'News for ann@example.com', template_version: 1 });
    expect(res.body.html).to.include('<p>Ann</p>');
  });

  it('sends a test email through the send path, tagged, listed in GET /v1/emails and not counted in the broadcast', async function () {
    const id = await draft();
    const res = await t.api.post(`/v1/broadcasts/${id}/test`, { to: `delivered@${SIM}`, contact_id: ann });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ object: 'email', subject: 'Hello Ann' });
    expect(res.body.tags).to.deep.include({ broadcast_test: id });
    const listed = (await t.api.get(`/v1/emails?tag=broadcast_test:${id}`)).body.data;
    expect(listed.map((e: { id: string }) => e.id)).to.deep.equal([res.body.id]);
    const anonymous = await t.api.post(`/v1/broadcasts/${id}/test`, { to: 'me@example.com' });
    expect(anonymous.status, anonymous.text).to.equal(202);
    expect(anonymous.body.subject).to.equal('Hello there');
    const b = (await t.api.get(`/v1/broadcasts/${id}`)).body;
    expect(b.status).to.equal('draft');
    expect(b.counts).to.include({ sent: 0, delivered: 0, recipients: 0 });
    expectError(await t.api.post(`/v1/broadcasts/${id}/test`, { to: 'not an address' }), 400, 'validation_error', 'to');
  });

  it('reports the counts, the bounces by reason and the outcomes per hour after a send', async function () {
    const id = await draft();
    expect((await t.api.post(`/v1/broadcasts/${id}/send`, {})).status).to.equal(200);
    const report = await waitFor(
      async () => {
        const r = (await t.api.get(`/v1/broadcasts/${id}/report`)).body;
        return r.status === 'sent' && r.counts.delivered + r.counts.bounced === 4 ? r : null;
      },
      20_000,
      'the broadcast sent and its outcomes',
    );
    expect(report).to.include({ object: 'broadcast_report', broadcast_id: id });
    expect(report.counts).to.include({ sent: 4, delivered: 3, bounced: 1, complained: 1 });
    expect(report.bounces.by_reason).to.deep.equal([{ reason: 'user_unknown', count: 1 }]);
    expect(report.bounces.by_type).to.deep.equal([{ bounce_type: 'Permanent', count: 1 }]);
    const hours = report.hourly as Array<Record<string, number | string>>;
    expect(hours.length).to.be.within(1, 2);
    const total = (k: string) => hours.reduce((s, h) => s + Number(h[k]), 0);
    expect({
      sent: total('sent'),
      delivered: total('delivered'),
      bounced: total('bounced'),
      complained: total('complained'),
    }).to.deep.equal({ sent: 4, delivered: 3, bounced: 1, complained: 1 });
    expect(String(hours[0].hour)).to.match(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
  });

  it('refuses unknown fields, a missing key, a key without the scope and another project’s ids', async function () {
    const id = await draft();
    expectError(
      await t.api.post(`/v1/broadcasts/${id}/preview`, { contact_id: ann, colour: 'red' }),
      400,
      'validation_error',
      'colour',
    );
    expectError(
      await t.api.post(`/v1/broadcasts/${id}/test`, { to: 'me@example.com', cc: 'x' }),
      400,
      'validation_error',
      'cc',
    );
    for (const [method, path] of [
      ['post', `/v1/broadcasts/${id}/preview`],
      ['post', `/v1/broadcasts/${id}/test`],
      ['get', `/v1/broadcasts/${id}/report`],
    ] as const) {
      const body = { contact_id: ann, to: 'me@example.com' };
      const call = (c: typeof t.api) =>
        method === 'get' ? c.get(path) : c.post(path, path.endsWith('preview') ? { contact_id: ann } : { to: body.to });
      expectError(await call(api.anonymous), 401, 'unauthorized');
      const narrow = await t.newKey({ scopes: ['emails:send', 'contacts:manage'] });
      expectError(await call(narrow.api), 403, 'forbidden');
      const other = await api.tenant();
      expectError(await call(other.api), 404, 'not_found');
    }
    // a contact of another project is not found either
    const other = await api.tenant();
    const theirs = (await other.api.post('/v1/contacts', { email: 'theirs@example.com' })).body.id;
    expectError(await t.api.post(`/v1/broadcasts/${id}/preview`, { contact_id: theirs }), 404, 'not_found');
    expectError(
      await t.api.post(`/v1/broadcasts/${id}/test`, { to: 'me@example.com', contact_id: theirs }),
      404,
      'not_found',
    );
    expect((await t.api.get(`/v1/emails?tag=broadcast_test:${id}`)).body.data).to.deep.equal([]);
  });
});
