import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { Tenant } from '../helpers/api.js';
import { dashboardWorld, signedIn, tabTo } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';
import { exportContacts } from '../../src/modules/audience/contact-import/contact-import.service.js';

interface ContactJson {
  id: string;
  email: string;
  first_name: string | null;
  properties: Record<string, unknown>;
  topics: Record<string, boolean>;
  audiences: string[];
}

describe('the dashboard in a browser: contacts, their properties and topics, the CSV import and export', function () {
  this.timeout(90_000);
  const w = dashboardWorld();

  /** A project with a string and a number property and a topic nobody gets unless they choose it. */
  async function tenantWithModel(): Promise<{ t: Tenant; topic: string }> {
    const t = await w.api.tenant();
    await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string' });
    await t.api.post('/v1/contact-properties', { key: 'seats', type: 'number' });
    const topic = (await t.api.post('/v1/topics', { name: 'Release notes', default_subscription: 'unsubscribed' })).body
      .id as string;
    return { t, topic };
  }
  const contact = async (t: Tenant, email: string) => (await t.api.get(`/v1/contacts/${email}`)).body as ContactJson;

  it('adds a contact with the keyboard alone: its names, a property and a topic', async function () {
    const { t, topic } = await tenantWithModel();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    await tabTo(page, '#add-email');
    await page.keyboard.type('kim@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Kim');
    await tabTo(page, '#add-prop-plan');
    await page.keyboard.type('pro');
    await tabTo(page, `#add-topic-${topic}`);
    await page.keyboard.press('Space');
    await tabTo(page, '#add-email');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Contact added' }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('kim@example.com');
    const c = await contact(t, 'kim@example.com');
    expect(c).to.include({ first_name: 'Kim' });
    expect(c.properties).to.deep.equal({ plan: 'pro' });
    expect(c.topics).to.deep.equal({ [topic]: true });
    await context.close();
  });

  it("shows the API's refusal beside the property it names, and keeps what was typed", async function () {
    const { t } = await tenantWithModel();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    await page.locator('#add-email').fill('lou@example.com');
    await page.locator('#add-prop-seats').fill('many');
    await page.getByRole('button', { name: 'Add contact' }).click();
    expect(await page.locator('#add-prop-seats').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#add-prop-seats-error').textContent()).to.include('must be a finite number');
    expect(await page.locator('#add-email').inputValue()).to.equal('lou@example.com');
    expect((await t.api.get('/v1/contacts/lou@example.com')).status).to.equal(404);
    await context.close();
  });

  it("changes a contact's properties and topics, and deletes it after a confirmation", async function () {
    const { t, topic } = await tenantWithModel();
    const made = (
      await t.api.post('/v1/contacts', {
        email: 'max@example.com',
        first_name: 'Max',
        properties: { plan: 'free', seats: 2 },
        topics: { [topic]: true },
      })
    ).body as ContactJson;
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    await page.getByRole('link', { name: 'max@example.com' }).click();
    await page.locator('#set-prop-plan').fill('team');
    await page.locator('#set-prop-seats').fill('');
    await page.getByLabel('Release notes').uncheck();
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByRole('status').filter({ hasText: 'Contact saved' }).waitFor();
    const c = await contact(t, made.id);
    expect(c.properties).to.deep.equal({ plan: 'team' });
    expect(c.topics).to.deep.equal({ [topic]: false });
    expect(await page.locator('#set-prop-plan').inputValue()).to.equal('team');

    await page.getByRole('link', { name: 'Delete contact…' }).click();
    await page.getByRole('heading', { name: 'Delete this contact?' }).waitFor();
    await page.getByRole('button', { name: 'Delete contact' }).click();
    await page.getByRole('status').filter({ hasText: 'Contact max@example.com is deleted' }).waitFor();
    expect((await t.api.get(`/v1/contacts/${made.id}`)).status).to.equal(404);
    await context.close();
  });

  it('finds contacts by a part of the address, and pages through a long list', async function () {
    const t = await w.api.tenant();
    for (let i = 0; i < 23; i++) await t.api.post('/v1/contacts', { email: `p${i}@list.example` });
    await t.api.post('/v1/contacts', { email: 'needle@other.example' });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    const rows = page.locator('table.contacts tbody tr');
    expect(await rows.count()).to.equal(20);
    await page.getByRole('link', { name: 'Older contacts →' }).click();
    expect(await rows.count()).to.equal(4);
    expect(await page.locator('table.contacts').textContent()).to.include('p0@list.example');
    await page.getByLabel('Find by address').fill('needle');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().textContent()).to.include('needle@other.example');
    await context.close();
  });

  it('imports a CSV file into an audience and shows the progress until the report is final, with the refused rows', async function () {
    const { t } = await tenantWithModel();
    const aud = (await t.api.post('/v1/audiences', { name: 'Imported' })).body as { id: string };
    await t.api.post('/v1/contacts', { email: 'old@import.example', first_name: 'Old' });
    const lines = ['email,first_name,plan', 'old@import.example,Renamed,pro', 'not-an-address,X,pro'];
    for (let i = 0; i < 1200; i++) lines.push(`row${i}@import.example,Row ${i},free`);
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts/import');
    await page.getByLabel('CSV file').setInputFiles({
      name: 'customers.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(lines.join('\n')),
    });
    await page.getByLabel('Also add them to').selectOption({ label: 'Imported' });
    await page.getByRole('button', { name: 'Import contacts' }).click();
    await page.getByRole('heading', { name: 'Import of customers.csv' }).waitFor();
    // the part refreshes itself (data-live-src) until it is final
    await page.locator('[data-final]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#import-state').textContent()).to.equal('Done.');
    const count = (name: string) => page.locator(`[data-count="${name}"]`).textContent();
    expect(await count('rows')).to.equal('1202');
    expect(await count('created')).to.equal('1200');
    expect(await count('updated')).to.equal('1');
    expect(await count('refused')).to.equal('1');
    const refused = page.locator('table.refused tbody tr td');
    expect(await refused.allTextContents()).to.deep.equal(['3', 'email must look like name@example.com']);
    expect(await axeViolations(page, 'import progress')).to.deep.equal([]);
    expect((await contact(t, 'old@import.example')).first_name).to.equal('Renamed');
    expect((await t.api.get(`/v1/audiences/${aud.id}`)).body.contact_count).to.equal(1201);
    await context.close();
  });

  it('refuses a file whose header names an unknown column, beside the file field', async function () {
    const { t } = await tenantWithModel();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts/import');
    await page.getByLabel('CSV file').setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email,colour\nann@example.com,red\n'),
    });
    await page.getByRole('button', { name: 'Import contacts' }).click();
    expect(await page.getByLabel('CSV file').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#imp-file-error').textContent()).to.include('the column colour is neither');
    expect((await t.api.get('/v1/contacts')).body.data).to.have.length(0);
    await context.close();
  });

  it('exports the contacts as a CSV download in the columns of the CLI export', async function () {
    const { t } = await tenantWithModel();
    await t.api.post('/v1/contacts', { email: 'ann@export.example', first_name: 'Ann', properties: { plan: 'pro' } });
    await t.api.post('/v1/contacts', { email: 'bo@export.example', unsubscribed: true, properties: { seats: 3 } });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export all contacts as CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).to.equal('contacts.csv');
    const csv = await readFile(await download.path(), 'utf8');
    let cli = '';
    await exportContacts(w.api.deps, t.project.id, null, (chunk) => (cli += chunk));
    expect(csv).to.equal(cli);
    expect(csv.split(/\r?\n/)[0]).to.equal('email,first_name,last_name,unsubscribed,plan,seats');
    expect(csv).to.include('ann@export.example,Ann,,false,pro,');
    await context.close();
  });

  it('declares a contact property with the keyboard alone, and deletes it', async function () {
    const t = await w.api.tenant();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts');
    await page.getByRole('navigation', { name: 'Contacts' }).getByRole('link', { name: 'Properties' }).click();
    await tabTo(page, '#prop-key');
    await page.keyboard.type('tier');
    await tabTo(page, '#prop-type');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, '#prop-fallback');
    await page.keyboard.type('1');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Property tier is declared' }).waitFor();
    const props = (await t.api.get('/v1/contact-properties')).body.data;
    expect(props).to.have.length(1);
    expect(props[0]).to.include({ key: 'tier', type: 'number', fallback: 1 });
    await page.getByRole('button', { name: 'Delete property tier' }).click();
    await page.getByRole('status').filter({ hasText: 'Property tier is deleted' }).waitFor();
    expect((await t.api.get('/v1/contact-properties')).body.data).to.have.length(0);
    await context.close();
  });
  it('refuses the export, the import and a count to a key without contacts:manage, as the contacts routes do', async function () {
    const t = await w.api.tenant({ scopes: ['emails:read'] });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    for (const path of ['/dashboard/contacts/export.csv', '/dashboard/contacts/import', '/dashboard/contacts']) {
      const res = await page.goto(path);
      expect(res!.status(), path).to.equal(403);
      expect(await page.getByRole('alert').textContent()).to.include('contacts:manage');
    }
    await context.close();
  });

  it("answers 404 for another project's import", async function () {
    const { t } = await tenantWithModel();
    const other = await w.api.tenant();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/contacts/import');
    await page.getByLabel('CSV file').setInputFiles({
      name: 'mine.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email\nmine@example.com\n'),
    });
    await page.getByRole('button', { name: 'Import contacts' }).click();
    await page.locator('[data-final]').waitFor();
    const mine = page.url();
    const theirs = await signedIn(w.browser, w.api.baseUrl, other.key);
    expect((await theirs.page.goto(mine))!.status()).to.equal(404);
    expect(await theirs.page.locator('main').textContent()).to.not.include('mine.csv');
    await theirs.context.close();
    await context.close();
  });
});
