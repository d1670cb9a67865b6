import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { simpleParser } from 'mailparser';
import { eachDatabase, DATABASE_KINDS } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { startLiveWorld, verifiedDomain, type LiveWorld } from '../helpers/live.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { SCOPES } from '../../src/modules/account/keys/scopes.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Store } from '../../src/store/store.js';
import { exportContacts, importContacts } from '../../src/modules/audience/contact-import/contact-import.service.js';
import { confirmSubmission } from '../../src/modules/audience/forms/form-confirmation.service.js';
import { signConfirmToken } from '../../src/modules/audience/forms/confirm-token.js';
import { formService, type FormDeps } from '../../src/modules/audience/forms/forms.service.js';

const PAGE = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };
const DAY = 86_400_000;

/** A POST from a given loopback source address (127.0.0.x): another client IP for the rate limits. */
function postFrom(
  localAddress: string,
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

eachDatabase('signup forms (issue 27)', (db) => {
  let api: TestApi;
  let t: Tenant;
  let audience: { id: string };
  // moved forward to see links expire and pending contacts pruned
  let offset = 0;
  before(async function () {
    api = await startTestApi(
      db().store,
      {
        http: { public_url: 'https://forms.example' },
        network: { allow_private: true },
        forms: { submissions_per_ip_per_hour: 1000, submissions_per_form_per_minute: 1000 },
      },
      { clock: { now: () => Date.now() + offset } },
    );
    t = await api.tenant();
    expect((await t.api.post('/v1/domains', { domain: 'news.forms.example' })).status).to.equal(201);
    await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string' });
    await t.api.post('/v1/contact-properties', { key: 'seats', type: 'number' });
    await t.api.post('/v1/contact-properties', { key: 'vip', type: 'boolean' });
    audience = (await t.api.post('/v1/audiences', { name: 'Newsletter' })).body;
  });
  after(async function () {
    await api.stop();
  });

  const FROM = 'News <news@news.forms.example>';
  const make = async (body: Record<string, unknown> = {}, tenant = t) => {
    const res = await tenant.api.post('/v1/forms', {
      name: 'Our newsletter',
      audience_id: audience.id,
      from: FROM,
      ...body,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; url: string; fields: string[] };
  };
  const local = (url: string) => url.replace('https://forms.example', api.baseUrl);
  const contactOf = async (email: string) => (await t.api.get(`/v1/contacts/${encodeURIComponent(email)}`)).body;
  const eventsOf = async (type: string) =>
    (
      (await db()
        .store.knex('events')
        .select('data')
        .where({ project_id: t.project.id, type })
        .orderBy('id')) as Array<{ data: string }>
    ).map((e) => JSON.parse(e.data));
  /** The mails to an address, once the confirmation mails handed over after the answers are accepted. */
  const mailsTo = async (email: string) => {
    await api.core.services.forms.drain();
    return (await t.api.get(`/v1/emails?to=${encodeURIComponent(email)}`)).body.data as Array<{
      id: string;
      subject: string;
      html: string;
    }>;
  };
  const submit = (f: { url: string }, body: string) =>
    fetch(local(f.url), { method: 'POST', headers: PAGE, body, redirect: 'manual' });

  describe('the routes', function () {
    it('makes a form with its defaults and its public url, and shows it back', async function () {
      const res = await t.api.post('/v1/forms', {
        name: 'Our newsletter',
        audience_id: audience.id,
        from: FROM,
        fields: ['first_name', 'plan'],
        allowed_origins: ['https://shop.example/', 'http://localhost:5173'],
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.id).to.match(/^frm_[0-9a-z]{26}$/);
      expect(res.body).to.deep.equal({
        object: 'form',
        id: res.body.id,
        name: 'Our newsletter',
        audience_id: audience.id,
        fields: ['email', 'first_name', 'plan'],
        double_opt_in: true,
        from: FROM,
        confirm_template_id: null,
        redirect_url: null,
        allowed_origins: ['https://shop.example', 'http://localhost:5173'],
        environment: 'test',
        url: `https://forms.example/f/${res.body.id}`,
        created_at: res.body.created_at,
      });
      expect((await t.api.get(`/v1/forms/${res.body.id}`)).body).to.deep.equal(res.body);
    });

    it('refuses what a form cannot be, naming the field', async function () {
      const base = { name: 'x', audience_id: audience.id, from: FROM };
      expectError(await t.api.post('/v1/forms', { ...base, from: undefined }), 400, 'validation_error', 'from');
      expectError(
        await t.api.post('/v1/forms', { ...base, from: 'news@elsewhere.example' }),
        400,
        'validation_error',
        'from',
      );
      expectError(await t.api.post('/v1/forms', { ...base, from: 'not an address' }), 400, 'validation_error', 'from');
      expectError(
        await t.api.post('/v1/forms', { ...base, fields: ['email', 'colour'] }),
        400,
        'validation_error',
        'fields[1]',
      );
      expectError(
        await t.api.post('/v1/forms', { ...base, fields: ['plan', 'plan'] }),
        400,
        'validation_error',
        'fields[1]',
      );
      expectError(
        await t.api.post('/v1/forms', { ...base, redirect_url: 'http://shop.example/thanks' }),
        400,
        'validation_error',
        'redirect_url',
      );
      expectError(
        await t.api.post('/v1/forms', { ...base, redirect_url: 'https://u:p@shop.example/' }),
        400,
        'validation_error',
        'redirect_url',
      );
      expectError(
        await t.api.post('/v1/forms', { ...base, allowed_origins: ['https://shop.example/signup'] }),
        400,
        'validation_error',
        'allowed_origins[0]',
      );
      expectError(
        await t.api.post('/v1/forms', { ...base, confirm_template_id: 'nope' }),
        400,
        'validation_error',
        'confirm_template_id',
      );
      expectError(await t.api.post('/v1/forms', { ...base, colour: 'red' }), 400, 'validation_error', 'colour');
      expectError(await t.api.post('/v1/forms', { ...base, audience_id: 'aud_nope' }), 404, 'not_found');
      expectError(await t.api.post('/v1/forms', { ...base, name: '' }), 400, 'validation_error', 'name');
      // without double opt-in no mail goes out: no From needed
      expect((await t.api.post('/v1/forms', { ...base, from: undefined, double_opt_in: false })).status).to.equal(201);
      // a live form mails from a verified domain only, as a live send does
      const live = await t.newKey({ mode: 'live' });
      expectError(await live.api.post('/v1/forms', base), 422, 'domain_not_verified');
      // another project's audience is not found
      const u = await api.tenant();
      expectError(await u.api.post('/v1/forms', base), 404, 'not_found');
      // a key without contacts:manage
      const narrow = await t.newKey({ scopes: SCOPES.filter((s) => s !== 'contacts:manage') });
      expectError(await narrow.api.get('/v1/forms'), 403, 'forbidden');
    });

    it('lists newest first a page at a time, changes and deletes, and keeps projects apart', async function () {
      const u = await api.tenant();
      await u.api.post('/v1/domains', { domain: 'u.forms.example' });
      const aud = (await u.api.post('/v1/audiences', { name: 'U' })).body;
      const made: string[] = [];
      for (let i = 0; i < 3; i++)
        made.push(
          (await u.api.post('/v1/forms', { name: `f${i}`, audience_id: aud.id, from: 'a@u.forms.example' })).body.id,
        );
      const first = (await u.api.get('/v1/forms?limit=2')).body;
      expect(first.data.map((f: { id: string }) => f.id)).to.deep.equal([made[2], made[1]]);
      const second = (await u.api.get(`/v1/forms?limit=2&cursor=${first.next_cursor}`)).body;
      expect(second).to.deep.include({ next_cursor: null });
      expect(second.data.map((f: { id: string }) => f.id)).to.deep.equal([made[0]]);
      expectError(await u.api.get('/v1/forms?cursor=nope'), 400, 'validation_error', 'cursor');

      const patched = await u.api.patch(`/v1/forms/${made[0]}`, {
        name: 'Renamed',
        double_opt_in: false,
        from: null,
        redirect_url: 'https://u.example/thanks',
      });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.include({
        name: 'Renamed',
        double_opt_in: false,
        from: null,
        redirect_url: 'https://u.example/thanks',
      });
      expectError(await u.api.patch(`/v1/forms/${made[0]}`, { double_opt_in: true }), 400, 'validation_error', 'from');
      expectError(
        await u.api.patch(`/v1/forms/${made[0]}`, { fields: ['nope'] }),
        400,
        'validation_error',
        'fields[0]',
      );

      for (const call of [
        t.api.get(`/v1/forms/${made[0]}`),
        t.api.patch(`/v1/forms/${made[0]}`, { name: 'x' }),
        t.api.delete(`/v1/forms/${made[0]}`),
      ])
        expectError(await call, 404, 'not_found');
      expect((await t.api.get('/v1/forms?limit=100')).body.data.map((f: { id: string }) => f.id)).to.not.include(
        made[0],
      );
      // the audience a form adds to cannot go while the form is there
      expectError(await u.api.delete(`/v1/audiences/${aud.id}`), 409, 'conflict');
      for (const id of made)
        expect((await u.api.delete(`/v1/forms/${id}`)).body).to.deep.equal({ object: 'form', id, deleted: true });
      expectError(await u.api.get(`/v1/forms/${made[0]}`), 404, 'not_found');
      expect((await u.api.delete(`/v1/audiences/${aud.id}`)).status).to.equal(200);
    });
  });

  describe('the public page and the JSON endpoint', function () {
    let form: { id: string; url: string };
    before(async function () {
      form = await make({ fields: ['first_name', 'plan', 'seats', 'vip'], allowed_origins: ['https://shop.example'] });
    });

    it('serves an accessible page with labels, autocomplete names and a honeypot hidden from people, and nothing from elsewhere', async function () {
      const res = await fetch(local(form.url));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
      const html = await res.text();
      expect(html).to.include('<h1>Our newsletter</h1>');
      expect(html).to.include(
        '<label for="f-email">Email address</label><input id="f-email" name="email" type="email" autocomplete="email" required',
      );
      expect(html).to.match(
        /<label for="f-first_name">First name.*<input id="f-first_name" name="first_name" type="text" autocomplete="given-name"/,
      );
      expect(html).to.match(/<input id="f-seats" name="seats" type="number"/);
      expect(html).to.match(/<input type="checkbox" id="f-vip" name="vip" value="true">/);
      expect(html).to.match(
        /<div class="hp" aria-hidden="true">.*<input id="f-hp" type="text" name="your-website" tabindex="-1" autocomplete="off" value="">/,
      );
      expect(html).to.not.match(/<script|<img|<link|https?:\/\/(?!forms\.example)/);
      expect((await fetch(`${api.baseUrl}/f/frm_00000000000000000000000000`)).status).to.equal(404);
      expect((await fetch(`${api.baseUrl}/f/nope`)).status).to.equal(404);
      const put = await fetch(local(form.url), { method: 'PUT' });
      expect(put.status).to.equal(405);
      expect(put.headers.get('allow')).to.equal('GET, HEAD, POST, OPTIONS');
    });

    it('takes a submission from the page: a pending contact outside the audience, no contact.created yet, one confirmation mail', async function () {
      const res = await fetch(local(form.url), {
        method: 'POST',
        headers: PAGE,
        body: 'email=Nia%40Example.com&first_name=Nia&plan=pro&seats=3&vip=false&vip=true&your-website=',
      });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('<h1>Check your inbox</h1>');
      const c = await contactOf('nia@example.com');
      expect(c).to.include({ pending: true, first_name: 'Nia', unsubscribed: false });
      expect(c.properties).to.deep.equal({ plan: 'pro', seats: 3, vip: true });
      expect(c.audiences).to.deep.equal([]);
      expect((await eventsOf('contact.created')).map((e) => e.email)).to.not.include('nia@example.com');
      const mails = await mailsTo('nia@example.com');
      expect(mails).to.have.length(1);
      expect(mails[0].subject).to.equal('Confirm your subscription to Our newsletter');
      // again within 10 minutes: the same answer, no second mail
      const again = await fetch(local(form.url), { method: 'POST', headers: PAGE, body: 'email=nia%40example.com' });
      expect(again.status).to.equal(200);
      expect(await mailsTo('nia@example.com')).to.have.length(1);
    });

    it('shows the page again naming a wrong field, and keeps what was typed', async function () {
      const res = await fetch(local(form.url), {
        method: 'POST',
        headers: PAGE,
        body: 'email=not-an-address&first_name=%3Cb%3EBo',
      });
      expect(res.status).to.equal(400);
      const html = await res.text();
      expect(html).to.match(/<p class="error" role="alert" id="form-error">email: /);
      expect(html).to.include('value="&lt;b&gt;Bo"').and.include('aria-invalid="true"');
      const bad = await fetch(local(form.url), {
        method: 'POST',
        headers: PAGE,
        body: 'email=bo%40example.com&seats=many',
      });
      expect(bad.status).to.equal(400);
      const badHtml = await bad.text();
      expect(badHtml).to.include('seats: must be a number');
      // the field the error is about is the one marked, not the address
      expect(badHtml).to.match(/<input id="f-seats" [^>]*aria-invalid="true" aria-describedby="form-error">/);
      expect(badHtml).to.not.match(/<input id="f-email" [^>]*aria-invalid/);
    });

    it('takes JSON, with CORS for the allowed origins only', async function () {
      const ok = await t.api.raw('POST', `/f/${form.id}`, {
        body: JSON.stringify({ email: 'json@example.com', seats: 2, vip: true }),
        headers: { ...JSON_TYPE, origin: 'https://shop.example' },
      });
      expect(ok.status, ok.text).to.equal(202);
      expect(ok.body).to.deep.equal({ status: 'pending_confirmation' });
      expect(ok.headers.get('access-control-allow-origin')).to.equal('https://shop.example');
      expect((await contactOf('json@example.com')).properties).to.deep.equal({ seats: 2, vip: true });
      const elsewhere = await t.api.raw('POST', `/f/${form.id}`, {
        body: JSON.stringify({ email: 'json2@example.com' }),
        headers: { ...JSON_TYPE, origin: 'https://evil.example' },
      });
      expect(elsewhere.status).to.equal(202);
      expect(elsewhere.headers.get('access-control-allow-origin')).to.equal(null);

      const pre = await fetch(local(form.url), {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(pre.status).to.equal(204);
      expect(pre.headers.get('access-control-allow-origin')).to.equal('https://shop.example');
      expect(pre.headers.get('access-control-allow-methods')).to.equal('POST');
      expect(pre.headers.get('access-control-allow-headers')).to.equal('Content-Type');
      const refused = await fetch(local(form.url), {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(refused.status).to.equal(204);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(null);

      const post = (body: unknown) =>
        t.api.raw('POST', `/f/${form.id}`, {
          body: JSON.stringify(body),
          headers: { ...JSON_TYPE, origin: 'https://shop.example' },
        });
      const invalid = await post({ email: 'nope' });
      expectError(invalid, 400, 'validation_error', 'email');
      expect(invalid.headers.get('access-control-allow-origin'), 'the site can read why').to.equal(
        'https://shop.example',
      );
      expectError(await post({ email: 'x@example.com', colour: 'red' }), 400, 'validation_error', 'colour');
      expectError(await post({ email: 'x@example.com', seats: 'many' }), 400, 'validation_error', 'seats');
      expectError(await post(['x@example.com']), 400, 'validation_error', 'body');
      expectError(
        await t.api.raw('POST', '/f/frm_00000000000000000000000000', {
          body: '{"email":"x@example.com"}',
          headers: JSON_TYPE,
        }),
        404,
        'not_found',
      );
      expectError(
        await t.api.raw('POST', `/f/${form.id}`, { body: 'email=x', headers: { 'content-type': 'text/plain' } }),
        400,
        'validation_error',
        'body',
      );
      expectError(
        await t.api.raw('POST', `/f/${form.id}`, {
          body: JSON.stringify({ email: 'x@example.com', plan: 'y'.repeat(20_000) }),
          headers: JSON_TYPE,
        }),
        413,
        'payload_too_large',
      );
      expect(
        (
          await fetch(local(form.url), {
            method: 'POST',
            headers: PAGE,
            body: `email=x%40example.com&plan=${'y'.repeat(20_000)}`,
          })
        ).status,
      ).to.equal(413);
    });

    it('answers a filled honeypot exactly like a success, and stores and sends nothing', async function () {
      const page = async (body: string) => {
        const res = await fetch(local(form.url), { method: 'POST', headers: PAGE, body });
        return { status: res.status, html: await res.text() };
      };
      const real = await page('email=human%40example.com');
      const bot = await page('email=bot%40example.com&your-website=http%3A%2F%2Fspam.example');
      expect(bot).to.deep.equal(real);
      const json = await t.api.raw('POST', `/f/${form.id}`, {
        body: JSON.stringify({ email: 'bot2@example.com', 'your-website': 'x' }),
        headers: JSON_TYPE,
      });
      expect(json.status).to.equal(202);
      expect(json.body).to.deep.equal({ status: 'pending_confirmation' });
      for (const email of ['bot@example.com', 'bot2@example.com']) {
        expectError(await t.api.get(`/v1/contacts/${email}`), 404, 'not_found');
        expect(await mailsTo(email)).to.have.length(0);
      }
    });

    it('answers the same for an unknown, a known and an unsubscribed address, and changes no known contact', async function () {
      await t.api.post('/v1/contacts', { email: 'known@example.com', first_name: 'Kim', properties: { plan: 'team' } });
      await t.api.post('/v1/contacts', { email: 'gone@example.com', unsubscribed: true });
      const before = { known: await contactOf('known@example.com'), gone: await contactOf('gone@example.com') };
      const answers = [];
      for (const email of ['unknown@example.com', 'known@example.com', 'gone@example.com']) {
        const page = await fetch(local(form.url), {
          method: 'POST',
          headers: PAGE,
          body: `email=${encodeURIComponent(email)}&first_name=Mallory&plan=free`,
        });
        const json = await t.api.raw('POST', `/f/${form.id}`, {
          body: JSON.stringify({ email, first_name: 'Mallory' }),
          headers: JSON_TYPE,
        });
        answers.push({ page: [page.status, await page.text()], json: [json.status, json.text] });
      }
      expect(answers[1]).to.deep.equal(answers[0]);
      expect(answers[2]).to.deep.equal(answers[0]);
      expect(await contactOf('known@example.com')).to.deep.equal(before.known);
      expect(await contactOf('gone@example.com')).to.deep.equal(before.gone);
      // each address gets its confirmation mail: whether it is known shows in no answer
      for (const email of ['unknown@example.com', 'known@example.com', 'gone@example.com'])
        expect(await mailsTo(email), email).to.have.length(1);
    });

    it('renders the confirmation mail from the form’s template', async function () {
      const tpl = await t.api.post('/v1/templates', {
        id: 'confirm-signup',
        subject: 'Please confirm, {{ first_name | there }}',
        html: '<p><a href="{{ confirm_url }}">Yes, sign up {{ email }}</a></p>',
        variables: { confirm_url: {}, email: {}, first_name: { required: false }, last_name: { required: false } },
      });
      expect(tpl.status, tpl.text).to.equal(201);
      const f = await make({ fields: ['first_name'], confirm_template_id: 'confirm-signup' });
      await fetch(local(f.url), { method: 'POST', headers: PAGE, body: 'email=tpl%40example.com&first_name=Tia' });
      const [mail] = await mailsTo('tpl@example.com');
      expect(mail.subject).to.equal('Please confirm, Tia');
      const full = (await t.api.get(`/v1/emails/${mail.id}/content`)).body;
      expect(full.html).to.match(
        new RegExp(`href="https://forms\\.example/f/${f.id}/confirm/[0-9a-z]{26}-[0-9a-f]{32}"`),
      );
      expect(full.html).to.include('Yes, sign up tpl@example.com');
    });

    it('without double opt-in, applies at once: the contact joins with contact.created, a known one is updated, an unsubscribed one stays so', async function () {
      const f = await make({
        double_opt_in: false,
        from: null,
        fields: ['first_name'],
        redirect_url: 'https://shop.example/thanks',
      });
      const res = await fetch(local(f.url), {
        method: 'POST',
        headers: PAGE,
        body: 'email=direct%40example.com&first_name=Dee',
        redirect: 'manual',
      });
      expect(res.status).to.equal(303);
      expect(res.headers.get('location')).to.equal('https://shop.example/thanks');
      expect(await contactOf('direct@example.com')).to.deep.include({
        pending: false,
        first_name: 'Dee',
        audiences: [audience.id],
      });
      expect((await eventsOf('contact.created')).filter((e) => e.email === 'direct@example.com')).to.have.length(1);
      const json = await t.api.raw('POST', `/f/${f.id}`, {
        body: JSON.stringify({ email: 'gone@example.com', first_name: 'Gia' }),
        headers: JSON_TYPE,
      });
      expect(json.body).to.deep.equal({ status: 'subscribed' });
      expect(await contactOf('gone@example.com')).to.deep.include({
        first_name: 'Gia',
        unsubscribed: true,
        audiences: [audience.id],
      });
      expect(await mailsTo('direct@example.com')).to.have.length(0);
    });

    it('confirms by the link: GET changes nothing, POST applies once; an old link no longer works and the pending contacts it made are pruned', async function () {
      const f = await make({ fields: ['first_name'] });
      await fetch(local(f.url), { method: 'POST', headers: PAGE, body: 'email=late%40example.com&first_name=Lee' });
      await fetch(local(f.url), { method: 'POST', headers: PAGE, body: 'email=kept%40example.com' });
      const linkOf = async (email: string) =>
        local(
          /href="([^"]+)"/
            .exec((await t.api.get(`/v1/emails/${(await mailsTo(email))[0].id}/content`)).body.html)![1]
            .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))),
        );
      const kept = await linkOf('kept@example.com');
      expect((await fetch(kept)).status).to.equal(200);
      expect((await contactOf('kept@example.com')).pending, 'a GET confirms nothing').to.equal(true);
      expect((await fetch(kept, { method: 'POST' })).status).to.equal(200);
      expect((await fetch(kept, { method: 'POST' })).status, 'twice is harmless').to.equal(200);
      expect((await eventsOf('contact.created')).filter((e) => e.email === 'kept@example.com')).to.have.length(1);
      expect((await fetch(kept.replace(/-[0-9a-f]{4}/, '-0000'))).status).to.equal(404);
      expect((await fetch(kept.replace(f.id, form.id))).status, 'another form’s link').to.equal(404);

      const late = await linkOf('late@example.com');
      // the page shows what confirming would save: whoever typed the address chose it
      expect(await (await fetch(late)).text()).to.include('<dt>First name</dt><dd>Lee</dd>');
      offset = 8 * DAY;
      try {
        expect((await fetch(late)).status).to.equal(404);
        expect((await fetch(late, { method: 'POST' })).status).to.equal(404);
        expect(await api.core.services.forms.prunePending()).to.be.at.least(1);
      } finally {
        offset = 0;
      }
      expectError(await t.api.get('/v1/contacts/late@example.com'), 404, 'not_found');
      // confirmed contacts and the contacts of the API stay
      expect((await contactOf('kept@example.com')).pending).to.equal(false);
      expect((await contactOf('known@example.com')).first_name).to.equal('Kim');
    });
  });

  describe('the page’s policy and who may change a form', function () {
    it('lets the page’s form go to its redirect_url’s origin, on the page and on the page shown again', async function () {
      const plain = await make();
      expect((await fetch(local(plain.url))).headers.get('content-security-policy')).to.include("form-action 'self';");
      const f = await make({
        double_opt_in: false,
        from: null,
        fields: ['seats'],
        redirect_url: 'https://shop.example:8443/thanks?from=form',
      });
      expect((await fetch(local(f.url))).headers.get('content-security-policy')).to.include(
        "form-action 'self' https://shop.example:8443;",
      );
      const again = await submit(f, 'email=csp%40example.com&seats=many');
      expect(again.status).to.equal(400);
      expect(again.headers.get('content-security-policy')).to.include("form-action 'self' https://shop.example:8443;");
    });

    it('keeps a live form from a test key (403 on PATCH and DELETE), and a test form test whatever key changes it', async function () {
      const live = await t.newKey({ mode: 'live' });
      const made = await live.api.post('/v1/forms', {
        name: 'Live form',
        audience_id: audience.id,
        double_opt_in: false,
      });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.environment).to.equal('live');
      expectError(await t.api.patch(`/v1/forms/${made.body.id}`, { name: 'Changed by a test key' }), 403, 'forbidden');
      expectError(await t.api.delete(`/v1/forms/${made.body.id}`), 403, 'forbidden');
      expect((await t.api.get(`/v1/forms/${made.body.id}`)).body).to.deep.equal(made.body);
      const testForm = await make({ double_opt_in: false, from: null });
      const patched = await live.api.patch(`/v1/forms/${testForm.id}`, { name: 'Changed by a live key' });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.include({ name: 'Changed by a live key', environment: 'test' });
      expect((await live.api.delete(`/v1/forms/${made.body.id}`)).status).to.equal(200);
    });
  });

  describe('pending contacts', function () {
    const createdOf = async (email: string) =>
      (await eventsOf('contact.created')).filter((e) => e.email === email).length;

    it('are vouched for by any write of the operator (POST, upsert, PATCH, an audience, the import): no longer pending, announced once as created, not pruned', async function () {
      const f = await make({ fields: ['first_name', 'plan'] });
      const emails = ['p-post', 'p-upsert', 'p-patch', 'p-audience', 'p-import'].map((x) => `${x}@example.com`);
      for (const e of emails) await submit(f, `email=${encodeURIComponent(e)}&first_name=Mallory&plan=evil`);
      const before = Object.fromEntries(await Promise.all(emails.map(async (e) => [e, await contactOf(e)] as const)));
      for (const e of emails) expect(before[e].pending, e).to.equal(true);

      // POST, with or without upsert: the pending contact counts as none; the operator's values replace the stranger's
      const post = await t.api.post('/v1/contacts', { email: 'p-post@example.com', last_name: 'Post' });
      expect(post.status, post.text).to.equal(201);
      expect(post.body).to.deep.include({
        id: before['p-post@example.com'].id,
        pending: false,
        first_name: null,
        last_name: 'Post',
        properties: {},
      });
      const upsert = await t.api.post('/v1/contacts?upsert=true', { email: 'p-upsert@example.com', first_name: 'Uma' });
      expect(upsert.status, upsert.text).to.equal(201);
      expect(upsert.body).to.deep.include({ pending: false, first_name: 'Uma', properties: {} });
      expect(
        (await t.api.post('/v1/contacts?upsert=true', { email: 'p-upsert@example.com', last_name: 'U' })).status,
        'then it is the operator’s',
      ).to.equal(200);
      expectError(await t.api.post('/v1/contacts', { email: 'p-post@example.com' }), 409, 'contact_exists');
      // PATCH and an audience: the contact as the operator sees it, pending cleared
      const patch = await t.api.patch('/v1/contacts/p-patch@example.com', { last_name: 'Patch' });
      expect(patch.status).to.equal(200);
      expect(patch.body).to.deep.include({ pending: false, first_name: 'Mallory', last_name: 'Patch' });
      const added = await t.api.post(`/v1/audiences/${audience.id}/contacts`, { emails: ['p-audience@example.com'] });
      expect(added.body).to.include({ added: 1, created_contacts: 0 });
      expect(await contactOf('p-audience@example.com')).to.deep.include({ pending: false, audiences: [audience.id] });
      // the import, as POST with upsert
      const report = await importContacts(api.deps, t.project.id, 'email,last_name\np-import@example.com,Imp\n', null);
      expect(report).to.include({ created: 1, updated: 0 });
      expect(await contactOf('p-import@example.com')).to.deep.include({
        id: before['p-import@example.com'].id,
        pending: false,
        first_name: null,
        last_name: 'Imp',
      });

      for (const e of emails) expect(await createdOf(e), e).to.equal(1);
      offset = 8 * DAY;
      try {
        await api.core.services.forms.prunePending();
      } finally {
        offset = 0;
      }
      for (const e of emails) expect((await contactOf(e)).pending, e).to.equal(false);
    });

    it('go without a contact.deleted when deleted, since nobody was told of them', async function () {
      const f = await make();
      await submit(f, 'email=p-delete%40example.com');
      expect((await t.api.delete('/v1/contacts/p-delete@example.com')).status).to.equal(200);
      expect((await eventsOf('contact.deleted')).filter((e) => e.email === 'p-delete@example.com')).to.have.length(0);
    });

    it('are pruned by their own age, also when the submission that made them went before a later one', async function () {
      const f = await make();
      try {
        await submit(f, 'email=twice%40example.com');
        offset = 5 * DAY;
        // past the ten minutes: a second submission and a second link
        await submit(f, 'email=twice%40example.com');
        expect(await mailsTo('twice@example.com')).to.have.length(2);
        offset = 8 * DAY;
        // the first submission goes; the second one's link still works, so the contact stays
        await api.core.services.forms.prunePending();
        expect(
          Number(
            (await db().store.knex('form_submissions').where({ email: 'twice@example.com' }).count({ n: '*' }).first())!
              .n,
          ),
        ).to.equal(1);
        expect((await contactOf('twice@example.com')).pending).to.equal(true);
        offset = 13 * DAY;
        await api.core.services.forms.prunePending();
      } finally {
        offset = 0;
      }
      expectError(await t.api.get('/v1/contacts/twice@example.com'), 404, 'not_found');
    });

    it('are left out of the export and of a segment’s members', async function () {
      const f = await make();
      await submit(f, 'email=unconfirmed%40example.com');
      await t.api.post('/v1/contacts', { email: 'member@example.com' });
      const seg = await t.api.post('/v1/segments', {
        name: 'Two',
        filter: "email == 'unconfirmed@example.com' or email == 'member@example.com'",
      });
      expect(seg.status, seg.text).to.equal(201);
      for (const path of [`/v1/segments/${seg.body.id}/contacts`, `/v1/contacts?segment_id=${seg.body.id}`]) {
        expect(
          (await t.api.get(path)).body.data.map((c: { email: string }) => c.email),
          path,
        ).to.deep.equal(['member@example.com']);
      }
      let csv = '';
      await exportContacts(api.deps, t.project.id, null, (chunk) => (csv += chunk));
      expect(csv).to.include('member@example.com').and.not.include('unconfirmed@example.com');
    });
  });

  describe('what a submission changes, and when', function () {
    it('without double opt-in, a known contact only joins: its values stay, empty ones are filled, an unticked box changes nothing', async function () {
      await t.api.post('/v1/contacts', {
        email: 'kept-values@example.com',
        first_name: 'Kim',
        properties: { plan: 'team', vip: true },
      });
      await t.api.post('/v1/contacts', { email: 'no-vip@example.com' });
      const f = await make({
        double_opt_in: false,
        from: null,
        fields: ['first_name', 'last_name', 'plan', 'seats', 'vip'],
      });
      expect(
        (
          await submit(
            f,
            'email=kept-values%40example.com&first_name=Mallory&last_name=Lee&plan=free&seats=4&vip=false',
          )
        ).status,
      ).to.equal(200);
      const kim = await contactOf('kept-values@example.com');
      expect(kim).to.deep.include({ first_name: 'Kim', last_name: 'Lee', pending: false, audiences: [audience.id] });
      expect(kim.properties).to.deep.equal({ plan: 'team', vip: true, seats: 4 });
      await submit(f, 'email=no-vip%40example.com&vip=false');
      expect((await contactOf('no-vip@example.com')).properties).to.deep.equal({});
    });

    it('answers before the confirmation mail is accepted: how long the accept takes shows in no answer', async function () {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let handed = 0;
      const accept = { submit: async () => (handed++, await held, { id: 'em_x' }) } as unknown as FormDeps['accept'];
      const forms = formService({
        store: db().store,
        clock: api.deps.clock,
        logger: silentLogger(),
        key: () => api.deps.tracking.key(),
        publicUrl: 'https://forms.example',
        allowPrivate: true,
        accept,
        templates: api.core.services.templates,
        limits: { perIpPerHour: 100, perFormPerMinute: 100 },
      });
      const f = await make();
      const answer = await Promise.race([
        forms.submit(f.id, '127.0.0.1', { email: 'slow@example.com' }),
        sleep(3000).then(() => 'it waited for the accept'),
      ]);
      expect(answer).to.deep.equal({ status: 'pending_confirmation', redirectUrl: null });
      let drained = false;
      const draining = forms.drain().then(() => (drained = true));
      await sleep(100);
      expect(handed).to.equal(1);
      expect(drained).to.equal(false);
      release();
      await draining;
    });

    it('answers that a link is not valid when its submission went between the check and the confirmation', async function () {
      const f = await make();
      await submit(f, 'email=vanish%40example.com');
      const sub = (await db()
        .store.knex('form_submissions')
        .select('id')
        .where({ email: 'vanish@example.com' })
        .first()) as { id: string };
      const token = signConfirmToken(await api.deps.tracking.key(), sub.id);
      const store = db().store;
      // the contact (and its submissions with it) is deleted once the link was checked
      const racing: Store = Object.assign(Object.create(store) as Store, {
        tx: async <T>(fn: (trx: Knex.Transaction) => Promise<T>) => {
          await t.api.delete('/v1/contacts/vanish@example.com');
          return store.tx(fn);
        },
      });
      const deps = {
        store: racing,
        clock: api.deps.clock,
        logger: silentLogger(),
        key: () => api.deps.tracking.key(),
        publicUrl: 'https://forms.example',
        allowPrivate: true,
        accept: null as never,
        templates: api.core.services.templates,
        limits: { perIpPerHour: 1, perFormPerMinute: 1 },
      };
      expect(await confirmSubmission(deps, f.id, token)).to.equal(null);
      expectError(await t.api.get('/v1/contacts/vanish@example.com'), 404, 'not_found');
    });

    it('stops the confirmation links of a suspended project’s forms', async function () {
      const u = await api.tenant();
      await u.api.post('/v1/domains', { domain: 'susp.forms.example' });
      const aud = (await u.api.post('/v1/audiences', { name: 'S' })).body;
      const f = (await u.api.post('/v1/forms', { name: 'S', audience_id: aud.id, from: 'a@susp.forms.example' })).body;
      await submit(f, 'email=susp%40example.com');
      const sub = (await db()
        .store.knex('form_submissions')
        .select('id')
        .where({ email: 'susp@example.com', form_id: f.id })
        .first()) as { id: string };
      const link = `${api.baseUrl}/f/${f.id}/confirm/${signConfirmToken(await api.deps.tracking.key(), sub.id)}`;
      expect((await fetch(link)).status).to.equal(200);
      await u.suspend();
      expect((await fetch(link)).status).to.equal(404);
      expect((await fetch(link, { method: 'POST' })).status).to.equal(404);
      expect(
        await db()
          .store.knex('contacts')
          .select('pending')
          .where({ email: 'susp@example.com', project_id: u.project.id })
          .first(),
      ).to.deep.equal({ pending: db().store.client === 'pg' ? true : 1 });
    });
  });

  describe('the rate limits', function () {
    let limited: TestApi;
    let u: Tenant;
    before(async function () {
      limited = await startTestApi(db().store, {
        forms: { submissions_per_ip_per_hour: 3, submissions_per_form_per_minute: 5 },
      });
      u = await limited.tenant();
    });
    after(async function () {
      await limited.stop();
    });

    it('refuses a client IP past its hourly submissions, and a form past its submissions per minute, with 429 whatever the address', async function () {
      const aud = (await u.api.post('/v1/audiences', { name: 'R' })).body;
      const byIp = (await u.api.post('/v1/forms', { name: 'R', audience_id: aud.id, double_opt_in: false })).body;
      const url = `${limited.baseUrl}/f/${byIp.id}`;
      for (let i = 0; i < 3; i++)
        expect((await postFrom('127.0.0.1', url, `email=r${i}%40example.com`, PAGE)).status).to.equal(200);
      const page = await postFrom('127.0.0.1', url, 'email=r9%40example.com', PAGE);
      expect(page.status).to.equal(429);
      expect(page.text).to.include('Too many sign-ups').and.not.include('r9@');
      const json = await postFrom('127.0.0.1', url, '{"email":"r9@example.com"}', JSON_TYPE);
      expect(json.status).to.equal(429);
      expect(JSON.parse(json.text).error.code).to.equal('rate_limited');
      expect((await postFrom('127.0.0.2', url, 'email=r9%40example.com', PAGE)).status, 'another IP').to.equal(200);

      const byForm = (await u.api.post('/v1/forms', { name: 'R2', audience_id: aud.id, double_opt_in: false })).body;
      const statuses = [];
      for (let i = 1; i <= 6; i++)
        statuses.push(
          (await postFrom(`127.0.0.${i + 10}`, `${limited.baseUrl}/f/${byForm.id}`, `email=s${i}%40example.com`, PAGE))
            .status,
        );
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429]);
    });
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`signup forms: double opt-in through the live send path [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    const PUBLIC = 'https://forms.live.test';
    let w: LiveWorld;
    let t: Tenant;
    let form: { id: string; url: string };
    let audience: { id: string };
    before(async function () {
      w = await startLiveWorld('dkim.forms.test', 'mta.forms.test', { http: { public_url: PUBLIC } }, {}, kind);
      t = await w.api.tenant({ mode: 'live' });
      const domain = await verifiedDomain(t, w.world);
      audience = (await t.api.post('/v1/audiences', { name: 'Newsletter' })).body;
      const res = await t.api.post('/v1/forms', {
        name: 'Live news',
        audience_id: audience.id,
        from: `News <news@${domain.domain}>`,
        fields: ['first_name'],
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.environment).to.equal('live');
      form = res.body;
    });
    after(async function () {
      await w?.stop();
    });

    const local = (url: string) => url.replace(PUBLIC, w.api.baseUrl);
    const contactOf = async (email: string) => (await t.api.get(`/v1/contacts/${encodeURIComponent(email)}`)).body;
    const created = async (email: string) =>
      (
        (await w.db.store
          .knex('events')
          .select('data')
          .where({ project_id: t.project.id, type: 'contact.created' })) as Array<{ data: string }>
      ).filter((e) => JSON.parse(e.data).email === email).length;
    /** The confirmation link of the mail the sink got for `email`. */
    const linkIn = async (email: string) => {
      const mail = await simpleParser((await w.sink.waitForMessage(email)).raw);
      expect(mail.subject).to.equal('Confirm your subscription to Live news');
      const m = new RegExp(`${PUBLIC.replace(/\./g, '\\.')}/f/${form.id}/confirm/[0-9a-z-]+`).exec(mail.text ?? '');
      expect(m, mail.text).to.not.equal(null);
      return local(m![0]);
    };

    it('mails a new address its link; only the confirmation adds the contact to the audience, with contact.created once', async function () {
      const email = `new-${kind}@ok.test`;
      const res = await fetch(local(form.url), {
        method: 'POST',
        headers: PAGE,
        body: `email=${encodeURIComponent(email)}&first_name=Nova`,
      });
      expect(res.status).to.equal(200);
      const link = await linkIn(email);
      expect(await contactOf(email)).to.deep.include({ pending: true, audiences: [] });
      expect((await t.api.get(`/v1/audiences/${audience.id}`)).body.contact_count).to.equal(0);

      const page = await fetch(link);
      expect(page.status).to.equal(200);
      expect(await page.text())
        .to.include('<button type="submit">Confirm</button>')
        .and.include('ne•••@ok.test');
      expect((await contactOf(email)).pending, 'a link scanner confirms nothing').to.equal(true);
      expect(await created(email)).to.equal(0);

      const confirmed = await fetch(link, { method: 'POST' });
      expect(confirmed.status).to.equal(200);
      expect(await confirmed.text())
        .to.include('Subscription confirmed')
        .and.include(`${PUBLIC}/p/`);
      expect(await contactOf(email)).to.deep.include({ pending: false, first_name: 'Nova', audiences: [audience.id] });
      expect((await fetch(link, { method: 'POST' })).status).to.equal(200);
      expect(await created(email)).to.equal(1);
    });

    it('keeps a known, unsubscribed contact as it is until it confirms, then applies the values and ends the unsubscription', async function () {
      const email = `known-${kind}@ok.test`;
      const kim = (await t.api.post('/v1/contacts', { email, first_name: 'Kim', unsubscribed: true })).body;
      await fetch(local(form.url), {
        method: 'POST',
        headers: PAGE,
        body: `email=${encodeURIComponent(email)}&first_name=Mallory`,
      });
      const link = await linkIn(email);
      expect(await contactOf(email)).to.deep.equal(kim);
      expect((await fetch(link, { method: 'POST' })).status).to.equal(200);
      expect(await contactOf(email)).to.deep.include({
        first_name: 'Mallory',
        unsubscribed: false,
        pending: false,
        audiences: [audience.id],
      });
      expect(await created(email)).to.equal(1);
    });
  });
}
