import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { launchBrowser, signedIn } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';

describe('the dashboard in a browser: webhook endpoints, their delivery log, replay and secret rotation', function () {
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
});
