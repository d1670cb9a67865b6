import { expect } from 'chai';
import { Resend } from 'resend';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';

// Resend's own Node SDK against /resend's broadcasts and templates (docs/resend.md): the calls of
// Resend's documentation, unchanged but for the base URL, what its types say each returns, and
// what the emails they make say (read through /v1).

const SIM = 'simulator.posthorn.test';
const FROM = 'Acme <news@example.test>';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

eachDatabase("Resend's SDK against /resend: broadcasts", (db) => {
  let api: TestApi;
  let t: Tenant;
  let resend: Resend;
  let audience: string;
  before(async function () {
    api = await startTestApi(db().store, { http: { public_url: 'https://mail.rb.test' } }, { roles: { jobs: true } });
    t = await api.tenant();
    resend = new Resend(t.key, { baseUrl: `${api.baseUrl}/resend` });
    audience = (await t.api.post('/v1/audiences', { name: 'Readers' })).body.id;
    for (const c of [{ email: `ann@${SIM}`, first_name: 'Ann' }, { email: `nameless@${SIM}` }]) {
      const made = await t.api.post('/v1/contacts', c);
      expect(made.status, made.text).to.equal(201);
      await t.api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: [made.body.id] });
    }
  });
  after(async function () {
    await api.stop();
  });

  const draft = (extra: Record<string, unknown> = {}) =>
    resend.broadcasts.create({
      segmentId: audience,
      from: FROM,
      name: 'November news',
      subject: 'Hi {{{FIRST_NAME|there}}}',
      html: '<p>Hello {{{FIRST_NAME|there}}},</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      ...extra,
    });

  /** The email the broadcast sent to `to`, as rendered (GET /v1/emails/{id}/content). */
  const contentFor = (to: string) =>
    waitFor(
      async () => {
        const list = (await t.api.get(`/v1/emails?to=${encodeURIComponent(to)}`)).body.data as Array<{ id: string }>;
        return list.length ? (await t.api.get(`/v1/emails/${list[0].id}/content`)).body : null;
      },
      20_000,
      `the email to ${to}`,
    );

  it('creates a draft, gets, lists and updates it, then sends it: each contact gets its own name or the fallback', async function () {
    const made = await draft();
    expect(made.error).to.equal(null);
    const id = made.data!.id;
    expect(id).to.match(/^bro_/);

    const got = await resend.broadcasts.get(id);
    expect(got.error).to.equal(null);
    expect(got.data).to.deep.include({
      object: 'broadcast',
      id,
      name: 'November news',
      segment_id: audience,
      audience_id: audience,
      from: FROM,
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>Hello {{{contact.first_name|there}}},</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      text: null,
      reply_to: null,
      preview_text: null,
      status: 'draft',
      scheduled_at: null,
      sent_at: null,
    });
    expect(got.data!.created_at).to.match(ISO);

    const listed = await resend.broadcasts.list();
    expect(listed.data).to.deep.include({ object: 'list', has_more: false });
    expect(listed.data!.data.find((b) => b.id === id)).to.deep.include({ status: 'draft', segment_id: audience });

    const updated = await resend.broadcasts.update(id, {
      subject: 'News for {{{FIRST_NAME|there}}}',
      replyTo: ['r@example.test'],
    });
    expect(updated).to.deep.include({ error: null, data: { id } });
    expect((await resend.broadcasts.get(id)).data).to.deep.include({ reply_to: ['r@example.test'] });

    const sent = await resend.broadcasts.send(id);
    expect(sent).to.deep.include({ error: null, data: { id } });
    const done = await waitFor(
      async () => {
        const b = (await resend.broadcasts.get(id)).data;
        return b?.status === 'sent' ? b : null;
      },
      20_000,
      'sent',
    );
    expect(done.sent_at).to.match(ISO);

    const toAnn = await contentFor(`ann@${SIM}`);
    expect(toAnn.subject).to.equal('News for Ann');
    expect(toAnn.html)
      .to.include('<p>Hello Ann,</p>')
      .and.match(/href="https:\/\/mail\.rb\.test\/p\/[^"]+"/);
    const toNameless = await contentFor(`nameless@${SIM}`);
    expect(toNameless.subject).to.equal('News for there');
    expect(toNameless.html).to.include('<p>Hello there,</p>');

    // sent: no longer a draft
    const removed = await resend.broadcasts.remove(id);
    expect(removed.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
  });

  it('creates and schedules at once with a phrase, and cancels it', async function () {
    const made = await draft({ send: true, scheduledAt: 'in 1 hour' });
    expect(made.error).to.equal(null);
    const got = (await resend.broadcasts.get(made.data!.id)).data!;
    expect(got.status).to.equal('queued');
    expect(Date.parse(got.scheduled_at!)).to.be.closeTo(Date.now() + 3_600_000, 60_000);

    const cancelled = await resend.broadcasts.cancel(made.data!.id);
    expect(cancelled).to.deep.include({ error: null, data: { object: 'broadcast', id: made.data!.id } });
    expect((await resend.broadcasts.get(made.data!.id)).data!.status).to.equal('canceled');
  });

  it('sends a draft at scheduled_at, duplicates it, and removes a draft', async function () {
    const id = (await draft()).data!.id;
    const at = new Date(Date.now() + 86_400_000).toISOString();
    expect(await resend.broadcasts.send(id, { scheduledAt: at })).to.deep.include({ error: null, data: { id } });
    expect((await resend.broadcasts.get(id)).data).to.deep.include({ status: 'queued', scheduled_at: at });

    const copy = await resend.broadcasts.duplicate(id);
    expect(copy.error).to.equal(null);
    expect(copy.data!.object).to.equal('broadcast');
    const dup = (await resend.broadcasts.get(copy.data!.id)).data!;
    expect(dup).to.deep.include({
      name: 'November news (copy)',
      status: 'draft',
      subject: 'Hi {{{contact.first_name|there}}}',
    });

    const removed = await resend.broadcasts.remove(copy.data!.id);
    expect(removed).to.deep.include({ error: null, data: { object: 'broadcast', id: copy.data!.id, deleted: true } });
    expect((await resend.broadcasts.get(copy.data!.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
    await resend.broadcasts.cancel(id);
  });

  it('pages with limit, after and before', async function () {
    const s = await api.tenant();
    const r = new Resend(s.key, { baseUrl: `${api.baseUrl}/resend` });
    const aud = (await s.api.post('/v1/audiences', { name: 'Paged' })).body.id;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await r.broadcasts.create({ segmentId: aud, from: FROM, subject: `n${i}`, text: 'x' })).data!.id);
    const first = await r.broadcasts.list({ limit: 2 });
    expect(first.data).to.deep.include({ has_more: true });
    expect(first.data!.data.map((b) => b.id)).to.deep.equal([ids[3], ids[2]]);
    const older = await r.broadcasts.list({ limit: 2, after: ids[2] });
    expect(older.data!.data.map((b) => b.id)).to.deep.equal([ids[1], ids[0]]);
    expect(older.data!.has_more).to.equal(false);
    const newer = await r.broadcasts.list({ limit: 2, before: ids[0] });
    expect(newer.data!.data.map((b) => b.id)).to.deep.equal([ids[2], ids[1]]);
    expect(newer.data!.has_more).to.equal(true);
  });

  it('refuses by name what has no counterpart here', async function () {
    const preview = await draft({ previewText: 'Three things we shipped' });
    expect(preview.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(preview.error!.message).to.match(/^preview_text: is not available here/);

    const unknown = await draft({ html: '<p>{{{COMPANY}}}</p>' });
    expect(unknown.error!.message).to.match(
      /^html line 1, column 4: \{\{\{COMPANY\}\}\} is not available in a broadcast/,
    );

    const id = (await draft()).data!.id;
    const recipients = await resend.broadcasts.recipients(id, { type: 'sent' } as never);
    expect(recipients.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(recipients.error!.message).to.include('not available');
    const noSegment = await resend.broadcasts.create({
      segmentId: 'aud_01kb0000000000000000000000',
      from: FROM,
      subject: 'x',
      text: 'x',
    });
    expect(noSegment.error).to.deep.include({ name: 'not_found', statusCode: 404 });
  });

  it('leaves no draft behind when a create with send: true is refused its send', async function () {
    const live = await t.newKey({ mode: 'live' });
    const r = new Resend(live.key, { baseUrl: `${api.baseUrl}/resend` });
    const before = (await r.broadcasts.list()).data!.data.length;
    const refused = await r.broadcasts.create({ segmentId: audience, from: FROM, subject: 'x', text: 'x', send: true });
    // a live send needs a verified From domain, as POST /v1/emails does
    expect(refused.error).to.deep.include({ name: 'validation_error', statusCode: 403 });
    expect((await r.broadcasts.list()).data!.data).to.have.length(before);
  });
});

eachDatabase("Resend's SDK against /resend: templates", (db) => {
  let api: TestApi;
  let t: Tenant;
  let resend: Resend;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
    resend = new Resend(t.key, { baseUrl: `${api.baseUrl}/resend` });
  });
  after(async function () {
    await api.stop();
  });

  const order = {
    name: 'order-confirmation',
    alias: 'order-confirmation',
    subject: 'Your {{{PRODUCT}}}',
    html: '<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p><p>Thanks, {{{BUYER|friend}}}</p>',
    variables: [
      { key: 'PRODUCT', type: 'string' as const, fallbackValue: 'item' },
      { key: 'PRICE', type: 'number' as const },
      { key: 'BUYER', type: 'string' as const },
    ],
  };

  /** What the email says, as rendered (GET /v1/emails/{id}/content). */
  const content = async (id: string) => (await t.api.get(`/v1/emails/${id}/content`)).body;

  it('creates and publishes a template with variables, and a send by alias renders values and fallbacks', async function () {
    const made = await resend.templates.create(order).publish();
    expect(made).to.deep.include({ error: null, data: { object: 'template', id: 'order-confirmation' } });

    const got = await resend.templates.get('order-confirmation');
    expect(got.error).to.equal(null);
    expect(got.data).to.deep.include({
      object: 'template',
      id: 'order-confirmation',
      alias: 'order-confirmation',
      name: 'order-confirmation',
      subject: order.subject,
      html: order.html,
      text: null,
      status: 'published',
      from: null,
      reply_to: null,
      has_unpublished_versions: false,
      current_version_id: 'order-confirmation@1',
    });
    expect(got.data!.published_at).to.match(ISO);
    expect(got.data!.variables!.map(({ key, type, fallback_value }) => ({ key, type, fallback_value }))).to.deep.equal([
      { key: 'PRODUCT', type: 'string', fallback_value: 'item' },
      { key: 'PRICE', type: 'number', fallback_value: null },
      { key: 'BUYER', type: 'string', fallback_value: null },
    ]);

    const full = await resend.emails.send({
      from: FROM,
      to: `delivered@${SIM}`,
      template: { id: 'order-confirmation', variables: { PRODUCT: 'Vintage Macintosh', PRICE: 499, BUYER: 'Ann' } },
    });
    expect(full.error, JSON.stringify(full.error)).to.equal(null);
    expect(await content(full.data!.id)).to.deep.include({
      subject: 'Your Vintage Macintosh',
      html: '<p>Name: Vintage Macintosh</p><p>Total: 499</p><p>Thanks, Ann</p>',
    });
    const fallbacks = await resend.emails.send({
      from: FROM,
      to: `delivered@${SIM}`,
      template: { id: 'order-confirmation', variables: { PRICE: 25 } },
    });
    expect(fallbacks.error).to.equal(null);
    expect(await content(fallbacks.data!.id)).to.deep.include({
      subject: 'Your item',
      html: '<p>Name: item</p><p>Total: 25</p><p>Thanks, friend</p>',
    });
    const missing = await resend.emails.send({
      from: FROM,
      to: `delivered@${SIM}`,
      template: { id: 'order-confirmation' },
    });
    expect(missing.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(missing.error!.message).to.include('PRICE');
  });

  it('updates (a new version sends at once), duplicates, lists and removes', async function () {
    const id = (await resend.templates.create({ ...order, alias: 'receipt', name: 'Receipt' })).data!.id;
    expect(id).to.equal('receipt');
    const updated = await resend.templates.update('receipt', { html: '<p>{{{PRODUCT}}} costs {{{PRICE}}}</p>' });
    expect(updated).to.deep.include({ error: null, data: { object: 'template', id: 'receipt' } });
    expect((await resend.templates.get('receipt')).data).to.deep.include({
      html: '<p>{{{PRODUCT}}} costs {{{PRICE}}}</p>',
      subject: order.subject,
      current_version_id: 'receipt@2',
    });
    expect(await resend.templates.publish('receipt')).to.deep.include({
      error: null,
      data: { object: 'template', id: 'receipt' },
    });
    const sent = await resend.emails.send({
      from: FROM,
      to: `delivered@${SIM}`,
      template: { id: 'receipt', variables: { PRICE: 3 } },
    });
    expect((await content(sent.data!.id)).html).to.equal('<p>item costs 3</p>');
    expect(await resend.templates.update('receipt', { name: 'Receipts' })).to.deep.include({ error: null });
    expect((await resend.templates.get('receipt')).data).to.deep.include({
      name: 'Receipts',
      current_version_id: 'receipt@2',
    });

    const copy = await resend.templates.duplicate('receipt');
    expect(copy.error).to.equal(null);
    expect(copy.data!.id).not.to.equal('receipt');
    expect((await resend.templates.get(copy.data!.id)).data).to.deep.include({
      name: 'Receipts (copy)',
      html: '<p>{{{PRODUCT}}} costs {{{PRICE}}}</p>',
      alias: copy.data!.id,
    });

    const listed = await resend.templates.list({ limit: 2 });
    expect(listed.data).to.deep.include({ object: 'list', has_more: true });
    expect(listed.data!.data.map((x) => x.id)).to.deep.equal([copy.data!.id, 'receipt']);
    expect(listed.data!.data[1]).to.deep.include({ name: 'Receipts', status: 'published', alias: 'receipt' });
    const older = await resend.templates.list({ limit: 2, after: 'receipt' });
    expect(older.data!.data.map((x) => x.id)).to.deep.equal(['order-confirmation']);

    expect(await resend.templates.remove(copy.data!.id)).to.deep.include({
      error: null,
      data: { object: 'template', id: copy.data!.id, deleted: true },
    });
    expect((await resend.templates.get(copy.data!.id)).error).to.deep.include({ name: 'not_found', statusCode: 404 });
  });

  it('makes an id when no alias is given, and refuses what has no counterpart, by name', async function () {
    const made = await resend.templates.create({ name: 'Plain', subject: 'Hi', html: '<p>Hi</p>' });
    expect(made.error).to.equal(null);
    expect((await resend.templates.get(made.data!.id)).data).to.deep.include({ alias: made.data!.id, name: 'Plain' });

    const taken = await resend.templates.create({ ...order });
    expect(taken.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    const sender = await resend.templates.create({ name: 'x', subject: 'x', html: 'x', from: FROM });
    expect(sender.error!.message).to.match(/^from: is not available here/);
    const undeclared = await resend.templates.create({ name: 'x', subject: 'x', html: '<p>{{{NOPE}}}</p>' });
    expect(undeclared.error).to.deep.include({
      name: 'validation_error',
      statusCode: 422,
      message: "html line 1, column 4: Variable 'NOPE' is used in the template but not defined in the variables list",
    });
    const rename = await resend.templates.update('order-confirmation', { alias: 'other' });
    expect(rename.error!.message).to.match(/^alias: cannot be changed/);
  });
});
