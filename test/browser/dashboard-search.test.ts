import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Tenant } from '../helpers/api.js';
import { dashboardWorld, signedIn, tabTo } from '../helpers/browser.js';

// The header's search box: an email by its id or Message-ID, by its recipient or a tag; a domain,
// a template, a contact; another project's never.
describe('the dashboard in a browser: one search box for emails, domains, templates and contacts', function () {
  this.timeout(90_000);
  const w = dashboardWorld();

  async function send(t: Tenant, subject: string, to: string, tags: Record<string, string> = {}) {
    const r = await t.api.post('/v1/emails', { from: 'shop@example.com', to: [to], subject, text: 'Hi', tags });
    expect(r.status, r.text).to.equal(202);
    return (r.body as { id: string }).id;
  }

  async function search(page: Page, q: string): Promise<void> {
    await page.locator('#site-q').fill(q);
    await page.locator('#site-q').press('Enter');
    await page.waitForLoadState();
  }

  it('goes straight to an email from its id or its Message-ID, typed in the header with the keyboard alone', async function () {
    const t = await w.api.tenant();
    const other = await w.api.tenant();
    const id = await send(t, 'Receipt 4711', 'buyer@search.example');
    const elsewhere = await send(other, 'Not yours', 'buyer@search.example');
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);

    await tabTo(page, '#site-q');
    await page.keyboard.type(id);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/dashboard/emails/${id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.include('Receipt 4711');

    // the Message-ID the recipient's copy carries, as a user pastes it from a mail client's headers
    const row: { message_id: string } = await w.db.store.knex('emails').where({ id }).first('message_id');
    await page.goto('/dashboard/templates');
    await search(page, row.message_id);
    await page.waitForURL(`**/dashboard/emails/${id}`);

    await search(page, elsewhere);
    expect(new URL(page.url()).pathname).to.equal('/dashboard/search');
    expect(await page.locator('main').textContent()).to.include(`No email ${elsewhere} in this project.`);
    await context.close();
  });

  it('lists what an address, a tag or a word matches, kind by kind, each linked to its page', async function () {
    const t = await w.api.tenant();
    const other = await w.api.tenant();
    await send(t, 'Welcome Ada', 'ada@lovelace.example', { kind: 'welcome' });
    await send(t, 'For Charles', 'charles@babbage.example', { kind: 'receipt' });
    await t.api.post('/v1/contacts', { email: 'ada@lovelace.example', first_name: 'Ada' });
    expect((await t.api.post('/v1/domains', { domain: 'mail.lovelace.example' })).status).to.equal(201);
    await t.api.post('/v1/templates', {
      id: 'lovelace-notes',
      name: 'Notes for Ada',
      subject: 'Notes',
      html: '<p>x</p>',
    });
    await other.api.post('/v1/templates', { id: 'lovelace-other', name: 'Not yours', subject: 'x', html: '<p>x</p>' });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);

    await search(page, 'ada@lovelace.example');
    const emails = page.getByRole('region', { name: 'Emails to ada@lovelace.example' });
    expect(await emails.getByRole('link').allTextContents()).to.deep.equal(['Welcome Ada']);
    const contacts = page.getByRole('region', { name: 'Contacts' });
    expect(await contacts.getByRole('link').allTextContents()).to.deep.equal(['ada@lovelace.example']);
    // the box keeps what was searched
    expect(await page.locator('#site-q').inputValue()).to.equal('ada@lovelace.example');

    await search(page, 'kind:receipt');
    const tagged = page.getByRole('region', { name: 'Emails tagged kind:receipt' });
    expect(await tagged.getByRole('link').allTextContents()).to.deep.equal(['For Charles']);

    await search(page, 'LOVELACE');
    expect(await page.getByRole('heading', { level: 2 }).allTextContents()).to.deep.equal([
      'Domains',
      'Templates',
      'Contacts',
    ]);
    expect(await page.getByRole('region', { name: 'Domains' }).getByRole('link').allTextContents()).to.deep.equal([
      'mail.lovelace.example',
    ]);
    const templates = page.getByRole('region', { name: 'Templates' });
    expect(await templates.getByRole('link').allTextContents()).to.deep.equal(['Notes for Ada']);
    await templates.getByRole('link', { name: 'Notes for Ada' }).click();
    await page.waitForURL('**/dashboard/templates/lovelace-notes');

    await search(page, 'no-such-thing-anywhere');
    expect(await page.locator('main p.empty').textContent()).to.equal('Nothing matches “no-such-thing-anywhere”.');
    await context.close();
  });

  it('leaves out the kinds the signed-in key may not read', async function () {
    const t = await w.api.tenant();
    await t.api.post('/v1/contacts', { email: 'hidden@scoped.example' });
    await send(t, 'Seen', 'hidden@scoped.example');
    const narrow = await t.newKey({ scopes: ['emails:read'] });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, narrow.key);
    await search(page, 'hidden@scoped.example');
    expect(await page.getByRole('heading', { level: 2 }).allTextContents()).to.deep.equal([
      'Emails to hidden@scoped.example',
    ]);
    expect(await page.locator('main').textContent()).not.to.include('Contacts');
    await context.close();
  });
});
