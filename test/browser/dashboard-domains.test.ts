import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { launchBrowser, signedIn, tabTo } from '../helpers/browser.js';

interface Rec {
  required: boolean;
  type: 'CNAME' | 'MX' | 'TXT';
  name: string;
  value: string;
  purpose: string;
}

describe('the dashboard in a browser: domains, adding and deleting them, their records, settings and insights', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let world: DnsWorld;
  let api: TestApi;
  let browser: Browser;
  let t: Tenant;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    api = await startTestApi(db.store, {
      dns: { resolvers: [world.address], zone: 'dkim.appliance.test' },
      outbound: { hostname: 'mta.appliance.test' },
    });
    browser = await launchBrowser();
    t = await api.tenant();
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await world?.stop();
    await db?.drop();
  });

  it('shows a domain\'s records, copies one to the clipboard, and verifies the domain on "Verify now"', async function () {
    const d = (await t.api.post('/v1/domains', { domain: 'shop.example.test' })).body as { id: string; records: Rec[] };
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.baseUrl });
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('link', { name: 'shop.example.test' }).click();
    await page.waitForURL(`**/dashboard/domains/${d.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.include('pending');

    const dkim = d.records.find((r) => r.required)!;
    await page
      .getByRole('button', { name: `Copy value of the ${dkim.purpose} ${dkim.type} record` })
      .first()
      .click();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).to.equal(dkim.value);

    for (const r of d.records.filter((x) => x.required)) world.add(r.name, r.type, r.value);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.waitForURL(`**/dashboard/domains/${d.id}?done=*`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.include('verified');
    expect((await t.api.get(`/v1/domains/${d.id}`)).body.status).to.equal('verified');
    await context.close();
  });

  it('saves tracking and TLS settings through the API', async function () {
    const d = (await t.api.post('/v1/domains', { domain: 'settings.example.test' })).body as { id: string };
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/domains/${d.id}`);
    await page.getByLabel('Track opens').check();
    await page.getByLabel('TLS to receiving servers').selectOption('enforced');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL(`**/dashboard/domains/${d.id}?done=*`);
    const after = (await t.api.get(`/v1/domains/${d.id}`)).body;
    expect(after).to.include({ open_tracking: true, click_tracking: false, tls: 'enforced' });
    expect(await page.getByLabel('Track opens').isChecked()).to.equal(true);
    await context.close();
  });

  it('draws the last 30 days of insights as labelled charts with the numbers in a table', async function () {
    const d = (await t.api.post('/v1/domains', { domain: 'charts.example.test' })).body as { id: string };
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/domains/${d.id}`);
    for (const name of ['Recipients per day', 'Bounce rate per day', 'Complaint rate per day'])
      await page.getByRole('img', { name }).waitFor();
    await page.getByText('The numbers per day').click();
    expect(await page.locator('details tbody tr').count()).to.equal(30);
    await context.close();
  });

  it("answers 404 for another project's domain", async function () {
    const other = await api.tenant();
    const theirs = (await other.api.post('/v1/domains', { domain: 'theirs.example.test' })).body as { id: string };
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    expect((await page.goto(`/dashboard/domains/${theirs.id}`))!.status()).to.equal(404);
    expect(await page.locator('main').textContent()).to.not.include('theirs.example.test');
    await page.goto('/dashboard/domains');
    expect(await page.locator('main').textContent()).to.not.include('theirs.example.test');
    await context.close();
  });

  it('adds a domain with the keyboard alone and shows the records to publish', async function () {
    const u = await api.tenant();
    const { context, page } = await signedIn(browser, api.baseUrl, u.key);
    await page.goto('/dashboard/domains');
    await tabTo(page, '#dom-domain');
    await page.keyboard.type('news.example.test');
    await tabTo(page, '#dom-clicks');
    await page.keyboard.press('Space');
    await tabTo(page, '#dom-custom_return_path');
    await page.keyboard.type('bounce');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Domain added' }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.include('news.example.test');
    const made = (await u.api.get('/v1/domains')).body.data.find(
      (d: { domain: string }) => d.domain === 'news.example.test',
    );
    expect(made).to.include({ click_tracking: true, open_tracking: false, custom_return_path: 'bounce' });
    // the page lists the records the API gives for it
    const shown = await page.locator('table.records').textContent();
    for (const r of (await u.api.get(`/v1/domains/${made.id}`)).body.records as Rec[])
      expect(shown).to.include(r.value);
    await context.close();
  });

  it("shows the API's refusal beside the field it names, and keeps what was typed", async function () {
    const u = await api.tenant();
    const { context, page } = await signedIn(browser, api.baseUrl, u.key);
    await page.goto('/dashboard/domains');
    await page.locator('#dom-domain').fill('refused.example.test');
    await page.locator('#dom-custom_return_path').fill('Not_A_Label');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const rp = page.locator('#dom-custom_return_path');
    expect(await rp.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#dom-custom_return_path-error').textContent()).to.match(/^custom_return_path: /);
    expect(await page.locator('#dom-domain').inputValue()).to.equal('refused.example.test');
    expect((await u.api.get('/v1/domains')).body.data.map((d: { domain: string }) => d.domain)).to.not.include(
      'refused.example.test',
    );

    // the same beside the settings of a domain
    const made = await u.api.post('/v1/domains', { domain: 'refusals.example.test' });
    expect(made.status, made.text).to.equal(201);
    const d = made.body as { id: string };
    await page.goto(`/dashboard/domains/${d.id}`);
    await page.locator('#set-custom_return_path').fill('-bad-');
    await page.getByRole('button', { name: 'Save settings' }).click();
    expect(await page.locator('#set-custom_return_path-error').textContent()).to.match(/^custom_return_path: /);
    expect(await page.locator('#set-custom_return_path').inputValue()).to.equal('-bad-');
    await context.close();
  });

  it('deletes a domain only after a confirmation that says live sends stop', async function () {
    const u = await api.tenant();
    const d = (await u.api.post('/v1/domains', { domain: 'gone.example.test' })).body as { id: string };
    const { context, page } = await signedIn(browser, api.baseUrl, u.key);
    await page.goto(`/dashboard/domains/${d.id}`);
    await page.getByRole('link', { name: 'Delete domain…' }).click();
    expect(await page.locator('main').textContent()).to.include('Live sends from it stop at once');
    expect((await u.api.get(`/v1/domains/${d.id}`)).status).to.equal(200);
    await page.getByRole('button', { name: 'Delete domain' }).click();
    await page.getByRole('status').filter({ hasText: 'gone.example.test is deleted' }).waitFor();
    expect((await u.api.get(`/v1/domains/${d.id}`)).status).to.equal(404);
    expect(await page.getByRole('link', { name: 'gone.example.test' }).count()).to.equal(0);
    await context.close();
  });
});
