import { expect } from 'chai';
import { Resend } from 'resend';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';

// Resend's own Node SDK (the `resend` package) against the Resend-compatible surface at /resend
// (docs/resend.md), as a team that moves over runs it: the calls of Resend's documentation,
// unchanged but for the base URL, and what Resend's documentation says each one returns.

const SIM = 'simulator.posthorn.test';
const FROM = 'Acme <onboarding@example.test>';

eachDatabase("Resend's SDK against /resend: emails and batches", (db) => {
  let api: TestApi;
  let t: Tenant;
  let resend: Resend;
  before(async function () {
    api = await startTestApi(db().store, {}, { roles: { mta: true } });
    t = await api.tenant();
    resend = new Resend(t.key, { baseUrl: `${api.baseUrl}/resend` });
  });
  after(async function () {
    await api.stop();
  });

  /** the last_event Resend's get shows, once it is `want` */
  const lastEvent = (id: string, want: string) =>
    waitFor(
      async () => {
        const { data } = await resend.emails.get(id);
        return data?.last_event === want ? data : null;
      },
      10_000,
      `last_event ${want}`,
    );

  it('sends with a string `to` and tags as [{name, value}], and gets it back as Resend shows an email', async function () {
    const { data, error } = await resend.emails.send({
      from: FROM,
      to: `delivered@${SIM}`,
      subject: 'Hello World',
      html: '<strong>It works!</strong>',
      replyTo: 'support@example.test',
      tags: [{ name: 'category', value: 'confirm_email' }],
    });
    expect(error).to.equal(null);
    expect(data!.id).to.match(/^msg_/);
    // the same email through /v1, as stored
    const stored = (await t.api.get(`/v1/emails/${data!.id}`)).body;
    expect(stored).to.deep.include({
      to: [`delivered@${SIM}`],
      reply_to: ['support@example.test'],
      tags: { category: 'confirm_email' },
    });
    const got = await lastEvent(data!.id, 'delivered');
    expect(got).to.deep.include({
      object: 'email',
      id: data!.id,
      from: FROM,
      to: [`delivered@${SIM}`],
      subject: 'Hello World',
      html: '<strong>It works!</strong>',
      reply_to: ['support@example.test'],
      scheduled_at: null,
    });
    expect(got.tags).to.deep.equal([{ name: 'category', value: 'confirm_email' }]);
    expect(Date.parse(got.created_at)).to.be.closeTo(Date.now(), 60_000);
  });

  it('lists with limit, after and before, and says whether more follow', async function () {
    const s = await api.tenant();
    const r = new Resend(s.key, { baseUrl: `${api.baseUrl}/resend` });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await r.emails.send({ from: FROM, to: [`delivered@${SIM}`], subject: `n${i}`, text: 'x' })).data!.id);
    const first = await r.emails.list({ limit: 2 });
    expect(first.error).to.equal(null);
    expect(first.data).to.deep.include({ object: 'list', has_more: true });
    expect(first.data!.data.map((e) => e.id)).to.deep.equal([ids[4], ids[3]]);
    const second = await r.emails.list({ limit: 2, after: ids[3] });
    expect(second.data!.data.map((e) => e.id)).to.deep.equal([ids[2], ids[1]]);
    const last = await r.emails.list({ limit: 2, after: ids[1] });
    expect(last.data).to.deep.include({ has_more: false });
    expect(last.data!.data.map((e) => e.id)).to.deep.equal([ids[0]]);
    const back = await r.emails.list({ limit: 2, before: ids[1] });
    expect(back.data!.data.map((e) => e.id)).to.deep.equal([ids[3], ids[2]]);
    expect(back.data!.has_more).to.equal(true);
  });

  it('schedules in natural language, moves it, and cancels it', async function () {
    const { data } = await resend.emails.send({
      from: FROM,
      to: [`delivered@${SIM}`],
      subject: 'Later',
      text: 'x',
      scheduledAt: 'in 1 hour',
    });
    const v1 = (await t.api.get(`/v1/emails/${data!.id}`)).body;
    expect(v1.status).to.equal('scheduled');
    expect(Date.parse(v1.scheduled_at) - Date.now()).to.be.closeTo(3_600_000, 60_000);
    const moved = await resend.emails.update({ id: data!.id, scheduledAt: 'tomorrow at 9am' });
    expect(moved).to.deep.include({ error: null, data: { object: 'email', id: data!.id } });
    expect((await t.api.get(`/v1/emails/${data!.id}`)).body.scheduled_at).to.match(/T09:00:00\.000Z$/);
    const cancelled = await resend.emails.cancel(data!.id);
    expect(cancelled).to.deep.include({ error: null, data: { object: 'email', id: data!.id } });
    expect((await resend.emails.get(data!.id)).data!.last_event).to.equal('canceled');
    // only a scheduled email can be cancelled
    const again = await resend.emails.cancel(data!.id);
    expect(again.data).to.equal(null);
    expect(again.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
  });

  it('sends a batch, strict by default and permissive when asked', async function () {
    const ok = await resend.batch.send([
      { from: FROM, to: [`delivered@${SIM}`], subject: 'one', html: '<p>1</p>' },
      { from: FROM, to: `delivered@${SIM}`, subject: 'two', html: '<p>2</p>' },
    ]);
    expect(ok.error).to.equal(null);
    expect(ok.data!.data).to.have.length(2);
    const subjects = await Promise.all(
      ok.data!.data.map(async (e) => (await t.api.get(`/v1/emails/${e.id}`)).body.subject),
    );
    expect(subjects).to.deep.equal(['one', 'two']);

    const strict = await resend.batch.send([
      { from: FROM, to: [`delivered@${SIM}`], subject: 'fine', text: 'x' },
      { from: FROM, to: ['not an address'], subject: 'bad', text: 'x' },
    ]);
    expect(strict.data).to.equal(null);
    expect(strict.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(strict.error!.message).to.match(/^\[1\]\.to\[0\]: /);

    const permissive = await resend.batch.send(
      [
        { from: FROM, to: [`delivered@${SIM}`], subject: 'fine', text: 'x' },
        { from: FROM, to: ['not an address'], subject: 'bad', text: 'x' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(permissive.error).to.equal(null);
    expect(permissive.data!.data).to.have.length(1);
    expect(permissive.data!.errors).to.have.length(1);
    expect(permissive.data!.errors[0]).to.deep.include({ index: 1 });
  });

  it('answers a retry with the same Idempotency-Key with the same email, and another body with 409', async function () {
    const key = `welcome-${Date.now()}`;
    const payload = { from: FROM, to: [`delivered@${SIM}`], subject: 'Welcome', text: 'hi' };
    const a = await resend.emails.send(payload, { idempotencyKey: key });
    const b = await resend.emails.send(payload, { idempotencyKey: key });
    expect(b.data!.id).to.equal(a.data!.id);
    const c = await resend.emails.send({ ...payload, subject: 'Other' }, { idempotencyKey: key });
    expect(c.error).to.deep.include({ name: 'invalid_idempotent_request', statusCode: 409 });
  });

  it('answers errors as Resend does: {statusCode, name, message}', async function () {
    const wrong = new Resend('re_not_a_key', { baseUrl: `${api.baseUrl}/resend` });
    const bad = await wrong.emails.send({ from: FROM, to: [`delivered@${SIM}`], subject: 's', text: 'x' });
    expect(bad.error).to.deep.include({ name: 'invalid_api_key', statusCode: 403 });
    const missing = await fetch(`${api.baseUrl}/resend/emails`);
    expect(missing.status).to.equal(401);
    expect(await missing.json()).to.deep.include({ statusCode: 401, name: 'missing_api_key' });
    const invalid = await resend.emails.send({ from: 'nobody', to: [`delivered@${SIM}`], subject: 's', text: 'x' });
    expect(invalid.error).to.deep.include({ name: 'validation_error', statusCode: 422 });
    expect(invalid.error!.message).to.match(/^from: /);
    const unknown = await resend.emails.get('msg_00000000000000000000000000');
    expect(unknown.error).to.deep.include({ name: 'not_found', statusCode: 404 });
    // a key without the emails:read scope
    const sendOnly = await t.newKey({ scopes: ['emails:send'] });
    const restricted = await new Resend(sendOnly.key, { baseUrl: `${api.baseUrl}/resend` }).emails.list();
    expect(restricted.error).to.deep.include({ name: 'restricted_api_key', statusCode: 401 });
  });

  it('takes its base URL from RESEND_BASE_URL, and with a trailing slash', async function () {
    const saved = process.env.RESEND_BASE_URL;
    process.env.RESEND_BASE_URL = `${api.baseUrl}/resend/`;
    try {
      const r = new Resend(t.key);
      const { data, error } = await r.emails.send({ from: FROM, to: [`delivered@${SIM}`], subject: 'env', text: 'x' });
      expect(error).to.equal(null);
      expect((await r.emails.get(data!.id)).data!.subject).to.equal('env');
    } finally {
      if (saved === undefined) delete process.env.RESEND_BASE_URL;
      else process.env.RESEND_BASE_URL = saved;
    }
  });
});
