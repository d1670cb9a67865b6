import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { signPreferenceToken } from '../../src/modules/audience/preferences/preference-token.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

eachDatabase('the hosted preference page (issue 27)', (db) => {
  let api: TestApi;
  let t: Tenant;
  let news: { id: string };
  let beta: { id: string };
  let ann: { id: string; email: string };
  let url: string;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
    news = (
      await t.api.post('/v1/topics', { name: 'Product news', description: 'What we ship, monthly', default: 'opt_out' })
    ).body;
    beta = (await t.api.post('/v1/topics', { name: 'Beta <invites>', default: 'opt_in' })).body;
    ann = (await t.api.post('/v1/contacts', { email: 'ann@pref.example', topics: { [beta.id]: true } })).body;
    url = `${api.baseUrl}/p/${signPreferenceToken(await api.deps.tracking.key(), ann.id)}`;
  });
  after(async function () {
    await api.stop();
  });

  const events = async () =>
    (await db()
      .store.knex('events')
      .select('type', 'data')
      .where({ project_id: t.project.id, type: 'contact.updated' })
      .orderBy('id')) as Array<{ type: string; data: string }>;
  const checkbox = (html: string, value: string) =>
    new RegExp(`<input type="checkbox" id="[^"]+" name="[^"]+" value="${value}"( checked)?`).exec(html);

  it('shows the masked address, every topic with its state, the unsubscribe-from-all box, and changes nothing', async function () {
    const before = { contact: (await t.api.get(`/v1/contacts/${ann.id}`)).body, events: (await events()).length };
    const res = await fetch(url);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const html = await res.text();
    expect(html).to.include('an•••@pref.example').and.not.include('ann@pref.example');
    expect(html)
      .to.include('Product news')
      .and.include('What we ship, monthly')
      .and.include('Beta &lt;invites&gt;')
      .and.not.include('<invites>');
    // opt_out with no choice: subscribed; opt_in chosen: subscribed
    expect(checkbox(html, news.id)![1]).to.equal(' checked');
    expect(checkbox(html, beta.id)![1]).to.equal(' checked');
    expect(checkbox(html, '1')![1], 'not unsubscribed').to.equal(undefined);
    expect(html)
      .to.include('Unsubscribe from all broadcast mail')
      .and.match(/receipts and password resets, still arrives/);
    expect(html).to.not.match(/<script|src=|role="status"/);
    expect((await fetch(url, { method: 'HEAD' })).status).to.equal(200);
    expect((await t.api.get(`/v1/contacts/${ann.id}`)).body, 'a GET changes nothing').to.deep.equal(before.contact);
    expect((await events()).length).to.equal(before.events);
  });

  it('saves the topics and the unsubscribed flag, with one contact.updated shaped as PATCH makes it, and shows Saved', async function () {
    const before = (await events()).length;
    const body = `shown=${news.id}&shown=${beta.id}&topic=${beta.id}&unsubscribed=1`;
    const res = await fetch(url, { method: 'POST', headers: FORM, body });
    expect(res.status).to.equal(200);
    const html = await res.text();
    expect(html).to.include('<p class="status" role="status">Saved.</p>');
    expect(checkbox(html, news.id)![1]).to.equal(undefined);
    expect(checkbox(html, '1')![1]).to.equal(' checked');
    const c = (await t.api.get(`/v1/contacts/${ann.id}`)).body;
    expect(c.topics).to.deep.equal({ [news.id]: false, [beta.id]: true });
    expect(c.unsubscribed).to.equal(true);
    const after = await events();
    expect(after.length - before).to.equal(1);
    expect(JSON.parse(after.at(-1)!.data)).to.deep.equal(c);

    // and back: subscribed again, out of the beta, in all broadcast mail
    await fetch(url, { method: 'POST', headers: FORM, body: `shown=${news.id}&shown=${beta.id}&topic=${news.id}` });
    expect((await t.api.get(`/v1/contacts/${ann.id}`)).body).to.deep.include({
      unsubscribed: false,
      topics: { [news.id]: true, [beta.id]: false },
    });
  });

  it('leaves a topic the page did not show as it was, and ignores one that is not the project’s', async function () {
    const later = (await t.api.post('/v1/topics', { name: 'Later', default: 'opt_out' })).body;
    const other = (await (await api.tenant()).api.post('/v1/topics', { name: 'Theirs', default: 'opt_in' })).body;
    const res = await fetch(url, {
      method: 'POST',
      headers: FORM,
      body: `shown=${news.id}&shown=${beta.id}&shown=${other.id}&topic=${other.id}`,
    });
    expect(res.status).to.equal(200);
    expect((await t.api.get(`/v1/contacts/${ann.id}`)).body.topics).to.deep.equal({
      [news.id]: false,
      [beta.id]: false,
      [later.id]: true,
    });
  });

  it('is 404 for a forged token, one of another installation, and a deleted contact; 405 for other methods; 413 past the bound', async function () {
    const token = url.slice(url.lastIndexOf('/') + 1);
    const forged = `${token.slice(0, -4)}0000`;
    const otherInstallation = signPreferenceToken(randomBytes(32), ann.id);
    for (const bad of [forged, otherInstallation, 'nope', `${token}-x`]) {
      const res = await fetch(`${api.baseUrl}/p/${bad}`);
      expect(res.status, bad).to.equal(404);
      expect(await res.text()).to.include('Link not valid');
      expect(
        (await fetch(`${api.baseUrl}/p/${bad}`, { method: 'POST', headers: FORM, body: 'unsubscribed=1' })).status,
      ).to.equal(404);
    }
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(url, { method });
      expect(res.status, method).to.equal(405);
      expect(res.headers.get('allow')).to.equal('GET, HEAD, POST');
    }
    const huge = await fetch(url, { method: 'POST', headers: FORM, body: `shown=${'x'.repeat(70_000)}` });
    expect(huge.status).to.equal(413);
    expect((await t.api.get(`/v1/contacts/${ann.id}`)).body.unsubscribed).to.equal(false);

    const gone = (await t.api.post('/v1/contacts', { email: 'gone@pref.example' })).body;
    const goneUrl = `${api.baseUrl}/p/${signPreferenceToken(await api.deps.tracking.key(), gone.id)}`;
    expect((await fetch(goneUrl)).status).to.equal(200);
    await t.api.delete(`/v1/contacts/${gone.id}`);
    expect((await fetch(goneUrl)).status).to.equal(404);
    expect((await fetch(goneUrl, { method: 'POST', headers: FORM, body: 'unsubscribed=1' })).status).to.equal(404);
  });

  it('keeps working for a suspended project’s contacts: leaving its mail stays possible', async function () {
    const u = await api.tenant();
    const bo = (await u.api.post('/v1/contacts', { email: 'bo@pref.example' })).body;
    const boUrl = `${api.baseUrl}/p/${signPreferenceToken(await api.deps.tracking.key(), bo.id)}`;
    await u.suspend();
    expect((await fetch(boUrl)).status).to.equal(200);
    const res = await fetch(boUrl, { method: 'POST', headers: FORM, body: 'unsubscribed=1' });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.include('Saved.');
    expect(
      (await db().store.knex('contacts').select('unsubscribed').where({ id: bo.id }).first()).unsubscribed,
    ).to.be.oneOf([true, 1]);
  });

  it('is 404 for a pending contact (a signup not confirmed): its page comes with the confirmation', async function () {
    const pending = (await t.api.post('/v1/contacts', { email: 'pending@pref.example' })).body;
    await db().store.knex('contacts').where({ id: pending.id }).update({ pending: true });
    const pendingUrl = `${api.baseUrl}/p/${signPreferenceToken(await api.deps.tracking.key(), pending.id)}`;
    expect((await fetch(pendingUrl)).status).to.equal(404);
    expect((await fetch(pendingUrl, { method: 'POST', headers: FORM, body: 'unsubscribed=1' })).status).to.equal(404);
    expect(
      (await db().store.knex('contacts').select('pending', 'unsubscribed').where({ id: pending.id }).first())
        .unsubscribed,
    ).to.be.oneOf([false, 0]);
  });
});
