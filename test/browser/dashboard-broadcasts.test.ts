import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { launchBrowser, signedIn, tabTo } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';
const content = {
  from: 'News <news@example.com>',
  subject: 'Hello {{contact.first_name | there}}',
  html: '<p>Hi {{contact.first_name | there}}, this is the news.</p>',
};

describe('the dashboard in a browser: broadcasts composed, previewed, tested, scheduled, sent, cancelled, deleted and reported', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let api: TestApi;
  let browser: Browser;
  let t: Tenant;
  let audience: string;
  let ann: string;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(db.store, { http: { public_url: 'https://mail.dash.test' } }, { roles: { jobs: true } });
    browser = await launchBrowser();
    t = await api.tenant();
    audience = (await t.api.post('/v1/audiences', { name: 'Readers' })).body.id;
    const ids: string[] = [];
    for (const c of [
      { email: 'ann@example.com', first_name: 'Ann' },
      { email: `bounced@${SIM}` },
      { email: `delivered@${SIM}`, first_name: 'Dev' },
    ])
      ids.push((await t.api.post('/v1/contacts', c)).body.id);
    ann = ids[0];
    expect((await t.api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: ids })).status).to.be.oneOf([
      200, 201,
    ]);
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await db?.drop();
  });

  const draft = async (name: string) => {
    const r = await t.api.post('/v1/broadcasts', { name, ...content, audience_id: audience });
    expect(r.status, r.text).to.equal(201);
    return r.body.id as string;
  };
  const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();

  it('composes a draft with the keyboard alone, and it is the API’s draft', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto('/dashboard/broadcasts');
    await tabTo(page, 'a[href="/dashboard/broadcasts/new"]');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/broadcasts/new');
    await tabTo(page, '#b-name');
    await page.keyboard.type('Keyboard news');
    await page.keyboard.press('Tab');
    await page.keyboard.type('News <news@example.com>');
    await tabTo(page, '#b-target');
    // the first audience, after the "choose" option
    await page.keyboard.press('ArrowDown');
    await tabTo(page, '#b-subject');
    await page.keyboard.type('Hello {{contact.first_name | there}}');
    await page.keyboard.press('Tab');
    await page.keyboard.type('<p>Typed news</p>');
    await tabTo(page, 'form.broadcast-form button[type=submit]');
    await page.keyboard.press('Enter');
    await status(page, 'Draft created');
    const made = (await t.api.get('/v1/broadcasts')).body.data.find(
      (b: { name: string }) => b.name === 'Keyboard news',
    );
    expect(made).to.include({
      status: 'draft',
      from: 'News <news@example.com>',
      audience_id: audience,
      html: '<p>Typed news</p>',
    });
    expect(page.url()).to.include(`/dashboard/broadcasts/${made.id}`);
    await page.goto('/dashboard/broadcasts');
    expect(await page.locator('table.broadcasts').textContent())
      .to.include('Keyboard news')
      .and.include('audience Readers');
    await context.close();
  });

  it("shows the API's refusals beside the fields they name, and keeps what was typed", async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto('/dashboard/broadcasts/new');
    await page.locator('#b-name').fill('Refused');
    await page.locator('#b-from').fill('not an address');
    await page.locator('#b-target').selectOption(audience);
    await page.locator('#b-subject').fill('Hi');
    await page.locator('#b-html').fill('<p>kept</p>');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await page.locator('#b-from').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#b-from-error').textContent()).to.match(/^from: /);
    expect(await page.locator('#b-html').inputValue()).to.equal('<p>kept</p>');

    await page.locator('#b-from').fill('News <news@example.com>');
    await page.locator('#b-html').fill('<p>{{contact.first_name</p>');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await page.locator('#b-html-error').textContent()).to.match(/^html: line 1, column/);

    await page.locator('#b-html').fill('<p>fine</p>');
    await page.locator('#b-target').selectOption('');
    await page.getByRole('button', { name: 'Create draft' }).click();
    expect(await page.locator('#b-target-error').textContent()).to.match(/^audience_id: /);
    expect((await t.api.get('/v1/broadcasts')).body.data.map((b: { name: string }) => b.name)).to.not.include(
      'Refused',
    );
    await context.close();
  });

  it('edits a draft', async function () {
    const id = await draft('To edit');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByRole('link', { name: 'Edit draft' }).click();
    expect(await page.locator('#b-subject').inputValue()).to.equal(content.subject);
    await page.locator('#b-subject').fill('A new subject');
    await page.locator('#b-reply_to').fill('help@example.com, sales@example.com');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await status(page, 'Draft saved');
    const b = (await t.api.get(`/v1/broadcasts/${id}`)).body;
    expect(b).to.include({ subject: 'A new subject' });
    expect(b.reply_to).to.deep.equal(['help@example.com', 'sales@example.com']);
    await context.close();
  });

  it('previews the broadcast for a contact of its audience, the HTML in a sandboxed frame', async function () {
    const id = await draft('To preview');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByLabel('Contact to preview').selectOption(ann);
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.locator('.rendered-subject').filter({ hasText: 'Hello Ann' }).waitFor();
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).to.equal('');
    expect(await page.frameLocator('iframe.preview').locator('body').textContent()).to.include(
      'Hi Ann, this is the news.',
    );
    // the script previews as another contact is chosen
    await page.getByLabel('Contact to preview').selectOption({ label: `bounced@${SIM}` });
    await page.locator('.rendered-subject').filter({ hasText: 'Hello there' }).waitFor();
    await context.close();
  });

  it('sends a test email that shows in Emails, tagged, and not in the counts', async function () {
    const id = await draft('To test');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByLabel('Test address').fill('not an address');
    await page.getByRole('button', { name: 'Send test email' }).click();
    expect(await page.locator('#t-to-error').textContent()).to.match(/^to: /);
    await page.getByLabel('Test address').fill(`delivered@${SIM}`);
    await page.getByLabel('Render the test as').selectOption(ann);
    await page.getByRole('button', { name: 'Send test email' }).click();
    await status(page, 'Test email sent');
    const emails = (await t.api.get(`/v1/emails?tag=broadcast_test:${id}`)).body.data;
    expect(emails).to.have.length(1);
    expect(emails[0]).to.include({ subject: 'Hello Ann' });
    await page.getByRole('link', { name: 'see it in Emails' }).click();
    await page.waitForURL(`**/dashboard/emails/${emails[0].id}`);
    expect((await t.api.get(`/v1/broadcasts/${id}`)).body.counts.sent).to.equal(0);
    await context.close();
  });

  it('schedules a draft at a UTC time, then cancels it', async function () {
    const id = await draft('To schedule');
    const at = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 16);
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByLabel('Send at (UTC)').fill(at);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await status(page, 'Scheduled');
    const b = (await t.api.get(`/v1/broadcasts/${id}`)).body;
    expect(b).to.include({ status: 'scheduled', scheduled_at: `${at}:00.000Z` });
    expect(await page.getByRole('button', { name: 'Send now' }).count()).to.equal(0);
    await page.getByRole('button', { name: 'Cancel broadcast' }).click();
    await status(page, 'Cancelled');
    expect((await t.api.get(`/v1/broadcasts/${id}`)).body.status).to.equal('cancelled');
    await context.close();
  });

  it('refuses a time more than 30 days ahead beside the schedule field', async function () {
    const id = await draft('Too late');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByLabel('Send at (UTC)').fill(new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Schedule' }).click();
    expect(await page.locator('#s-scheduled_at-error').textContent()).to.match(
      /^scheduled_at: must be at most 30 days ahead/,
    );
    expect((await t.api.get(`/v1/broadcasts/${id}`)).body.status).to.equal('draft');
    await context.close();
  });

  it('sends now; the counts refresh while it sends, and the report shows them with the bounce reason and the hours', async function () {
    const id = await draft('To send');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByRole('button', { name: 'Send now' }).click();
    await status(page, 'Sending');
    // the counts part refreshes itself (dashboard.js) until the broadcast is sent
    await page.locator('[data-live-src] [data-final]').waitFor({ timeout: 20_000 });
    await waitFor(
      async () => ((await t.api.get(`/v1/broadcasts/${id}`)).body.counts.bounced === 1 ? true : null),
      20_000,
      'the bounce',
    );
    await page.getByRole('link', { name: 'Report' }).click();
    const totals = page.locator('table.report-counts');
    expect(await totals.locator('tr', { hasText: 'Sent' }).first().textContent()).to.include('3');
    expect(await totals.locator('tr', { hasText: 'Delivered' }).textContent()).to.include('2 (66.7%)');
    expect(await totals.locator('tr', { hasText: 'Bounced' }).textContent()).to.include('1 (33.3%)');
    expect(await page.locator('table.bounce-reasons').textContent()).to.include('user_unknown');
    expect(await page.locator('svg.chart').count()).to.equal(2);
    expect(await page.locator('svg.chart rect.ok').count()).to.be.greaterThan(0);
    await context.close();
  });

  it('deletes a draft after a confirmation', async function () {
    const id = await draft('To delete');
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/broadcasts/${id}`);
    await page.getByRole('link', { name: 'Delete draft…' }).click();
    await page.getByRole('heading', { name: 'Delete this draft?' }).waitFor();
    await page.getByRole('button', { name: 'Delete draft' }).click();
    await status(page, 'is deleted');
    expect((await t.api.get(`/v1/broadcasts/${id}`)).status).to.equal(404);
    await context.close();
  });

  it("answers 404 for another project's broadcast and does not list it", async function () {
    const other = await api.tenant();
    const aud = (await other.api.post('/v1/audiences', { name: 'Theirs' })).body.id;
    const theirs = (await other.api.post('/v1/broadcasts', { name: 'Their secret', ...content, audience_id: aud }))
      .body;
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    expect((await page.goto(`/dashboard/broadcasts/${theirs.id}`))!.status()).to.equal(404);
    expect((await page.goto(`/dashboard/broadcasts/${theirs.id}/report`))!.status()).to.equal(404);
    await page.goto('/dashboard/broadcasts');
    expect(await page.locator('main').textContent()).to.not.include('Their secret');
    await context.close();
  });
});
