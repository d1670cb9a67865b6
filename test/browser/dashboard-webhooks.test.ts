import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { launchBrowser, signedIn, tabTo } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';

describe('the dashboard in a browser: webhook endpoints, their settings, test events, the delivery log, replay and secret rotation', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let hw: HookWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;
  let browser: Browser;
  let t: Tenant;
  let endpoint: { id: string; url: string };
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    hw = await startHookWorld();
    hooks = hw.hooks;
    api = await startTestApi(db.store, hw.config(), { roles: { mta: true, webhooks: true } });
    browser = await launchBrowser();
    t = await api.tenant();
    endpoint = (await t.api.post('/v1/webhooks', { url: hooks.url('/ok/dash'), description: 'orders' })).body;
    expect(
      (await t.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'x', text: 'y' }))
        .status,
    ).to.equal(202);
    await waitFor(
      async () => (hooks.to('/ok/dash').length >= 2 ? true : null),
      10_000,
      'the email events at the endpoint',
    );
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await hw?.stop();
    await db?.drop();
  });

  it('lists the deliveries with their status codes and replays one: the same event arrives again', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: endpoint.url }).click();
    await page.waitForURL(`**/dashboard/webhooks/${endpoint.id}`);
    const rows = page.locator('table.deliveries tbody tr');
    expect(await rows.count()).to.equal(2);
    expect(await rows.first().textContent())
      .to.include('succeeded')
      .and.include('HTTP 200');

    const eventId = (await rows.first().locator('code').textContent())!;
    const before = hooks.to('/ok/dash').filter((r) => r.json.id === eventId).length;
    await page.getByRole('button', { name: `Replay event ${eventId}` }).click();
    await page.getByRole('status').filter({ hasText: 'Replay queued' }).waitFor();
    await waitFor(
      async () => (hooks.to('/ok/dash').filter((r) => r.json.id === eventId).length === before + 1 ? true : null),
      10_000,
      'the replayed event',
    );
    await page.reload();
    expect(await rows.count()).to.equal(3);
    await context.close();
  });

  it('rotates the signing secret, shows it once, and the next requests verify with it', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).to.match(/^whsec_/);
    // a reload (a GET) does not show it again
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    expect(await page.content()).to.not.include(secret);

    const eventId = (await page.locator('table.deliveries tbody tr').first().locator('code').textContent())!;
    const seen = hooks.to('/ok/dash').length;
    await page
      .getByRole('button', { name: `Replay event ${eventId}` })
      .first()
      .click();
    const req = await waitFor(async () => hooks.to('/ok/dash')[seen] ?? null, 10_000, 'the request after the rotation');
    const header = req.headers['service-signature'];
    const ts = /t=(\d+)/.exec(header)![1];
    const v1s = [...header.matchAll(/v1=([0-9a-f]+)/g)].map((m) => m[1]);
    // during the rotation both secrets sign (interface §6 rule 3); one of them is the new one
    expect(v1s).to.have.length(2);
    expect(v1s).to.include(createHmac('sha256', secret).update(`${ts}.${req.rawBody}`).digest('hex'));
    await context.close();
  });

  it("answers 404 for another project's endpoint", async function () {
    const other = await api.tenant();
    const theirs = (await other.api.post('/v1/webhooks', { url: hooks.url('/ok/theirs') })).body;
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    expect((await page.goto(`/dashboard/webhooks/${theirs.id}`))!.status()).to.equal(404);
    await page.goto('/dashboard/webhooks');
    expect(await page.locator('main').textContent()).to.not.include('/ok/theirs');
    await context.close();
  });

  it('adds an endpoint with the keyboard alone, shows its secret once, and the events it chose arrive signed with it', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto('/dashboard/webhooks');
    const url = hooks.url('/ok/keyboard');
    await tabTo(page, '#add-url');
    await page.keyboard.type(url);
    await page.keyboard.press('Tab');
    await page.keyboard.type('billing');
    // email.received is not among the defaults: ticked with Space; email.opened is, and is unticked
    await tabTo(page, '#add-ev-email-received');
    await page.keyboard.press('Space');
    await tabTo(page, '#add-ev-email-opened');
    await page.keyboard.press('Space');
    await tabTo(page, 'form[action$="/webhooks"] button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByText('Endpoint added').waitFor();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).to.match(/^whsec_/);
    const made = (await t.api.get('/v1/webhooks')).body.data.find((e: { url: string }) => e.url === url);
    expect(made.description).to.equal('billing');
    expect(made.events).to.include('email.received').and.include('email.delivered').and.not.include('email.opened');
    // the secret is in that answer only
    await page.goto(`/dashboard/webhooks/${made.id}`);
    expect(await page.content()).to.not.include(secret);

    const before = hooks.to('/ok/keyboard').length;
    await t.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'k', text: 'y' });
    const req = await waitFor(async () => hooks.to('/ok/keyboard')[before] ?? null, 10_000, 'an event');
    const [, ts, v1] = /t=(\d+),v1=([0-9a-f]+)/.exec(req.headers['service-signature'])!;
    expect(v1).to.equal(createHmac('sha256', secret).update(`${ts}.${req.rawBody}`).digest('hex'));
    await context.close();
  });

  it("shows the API's refusal beside the field it names, and keeps what was typed", async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto('/dashboard/webhooks');
    await page.locator('#add-url').fill('http://plain.example.com/hook');
    await page.locator('#add-description').fill('kept');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const url = page.locator('#add-url');
    expect(await url.getAttribute('aria-invalid')).to.equal('true');
    const message = await page.locator('#add-url-error').textContent();
    expect(message)
      .to.match(/^url: /)
      .and.include('https');
    expect(await page.locator('#add-description').inputValue()).to.equal('kept');
    expect(await url.inputValue()).to.equal('http://plain.example.com/hook');

    // no event ticked: the message is at the events
    await url.fill(hooks.url('/ok/none'));
    for (const box of await page.locator('input[name=events]').all()) await box.uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.locator('#add-events-error').textContent()).to.match(/^events: /);
    expect((await t.api.get('/v1/webhooks')).body.data.map((e: { url: string }) => e.url)).to.not.include(
      hooks.url('/ok/none'),
    );
    await context.close();
  });

  it('changes settings, pauses and resumes, and sends a test event that shows in the log with its answer', async function () {
    const e = (await t.api.post('/v1/webhooks', { url: hooks.url('/ok/settings'), events: ['email.sent'] })).body;
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/webhooks/${e.id}`);
    await page.getByText('Change settings').click();
    await page.locator('#set-description').fill('warehouse');
    await page.locator('#set-ev-email-bounced').check();
    await page.locator('#set-signature').selectOption('standard');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved' }).waitFor();
    const saved = (await t.api.get(`/v1/webhooks/${e.id}`)).body;
    expect(saved).to.include({ description: 'warehouse', signature: 'standard' });
    expect(saved.events).to.deep.equal(['email.sent', 'email.bounced']);

    await page.getByRole('button', { name: 'Pause endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Paused' }).waitFor();
    expect((await t.api.get(`/v1/webhooks/${e.id}`)).body.active).to.equal(false);
    // a paused endpoint takes no test event: the form is not offered
    expect(await page.getByRole('button', { name: 'Send test event' }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Resume endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Resumed' }).waitFor();

    await page.getByLabel('Test event').selectOption('email.bounced');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const note = await page.getByRole('status').filter({ hasText: 'Test event' }).textContent();
    const eventId = /evt_[0-9a-z]{26}/.exec(note!)![0];
    const got = await waitFor(async () => hooks.to('/ok/settings')[0] ?? null, 10_000, 'the test event');
    expect(got.json).to.include({ id: eventId, type: 'email.bounced', simulated: true });
    // signed the new way (Standard Webhooks)
    expect(got.headers['webhook-id']).to.equal(eventId);
    const row = page.locator('table.deliveries tbody tr').first();
    await waitFor(
      async () => {
        await page.reload();
        return (await row.textContent())?.includes('succeeded') ? true : null;
      },
      10_000,
      'the delivery logged',
    );
    const text = (await row.textContent())!;
    expect(text).to.include('email.bounced').and.include(eventId).and.include('HTTP 200 in');
    // the receiver's answer ("200"), as the log keeps it
    expect(await row.locator('pre.answer').textContent()).to.equal('200');
    await context.close();
  });

  it('links a delivery to its email', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    const link = page.locator('table.deliveries tbody tr').last().locator('a[href*="/dashboard/emails/"]');
    const emailId = (await link.textContent())!;
    await link.click();
    await page.waitForURL(`**/dashboard/emails/${emailId}`);
    await context.close();
  });

  it('deletes an endpoint only after a confirmation that says what stops', async function () {
    const e = (await t.api.post('/v1/webhooks', { url: hooks.url('/ok/doomed') })).body;
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/webhooks/${e.id}`);
    await page.getByRole('link', { name: 'Delete endpoint…' }).click();
    expect(await page.locator('main').textContent()).to.include('Nothing more is sent to it');
    expect((await t.api.get(`/v1/webhooks/${e.id}`)).status).to.equal(200);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
    expect((await t.api.get(`/v1/webhooks/${e.id}`)).status).to.equal(404);
    expect(await page.locator('main table').textContent()).to.not.include('/ok/doomed');
    await context.close();
  });
});
