import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { launchBrowser, signedIn } from '../helpers/browser.js';

// The dashboard's template pages in headless Chromium against the real appliance (API over SQLite).
describe('the dashboard in a browser: templates, their versions, preview and restore', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let api: TestApi;
  let browser: Browser;
  let a: Tenant;
  let b: Tenant;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(db.store);
    browser = await launchBrowser();
    a = await api.tenant();
    b = await api.tenant();
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await db?.drop();
  });

  const publish = async (t: Tenant, body: Record<string, unknown>) => {
    const r = await t.api.post('/v1/templates', body);
    expect(r.status, r.text).to.equal(201);
    return r.body as { id: string; version: number };
  };
  const RECEIPT = {
    id: 'receipt',
    name: 'Receipt',
    subject: 'Hi {{ name }}',
    html: "<p>Hello <b>{{ name }}</b>, total {{ total | currency:'EUR' }}</p>{{#each items as item}}<i>{{ item.title }}</i>{{/each}}",
    text: 'Hello {{ name }}, total {{ total }}',
    variables: { name: {}, total: { type: 'number' }, items: { type: 'array', required: false } },
  };
  const openTemplate = async (t: Tenant, id: string): Promise<{ page: Page; close: () => Promise<void> }> => {
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/templates/${id}`);
    return { page, close: () => context.close() };
  };

  it('lists the templates published through the API, newest first, each linking to its page', async function () {
    const t = await api.tenant();
    await publish(t, { id: 'welcome', name: 'Welcome mail', subject: 'Welcome', text: 'Hi' });
    await new Promise((r) => setTimeout(r, 5));
    await publish(t, RECEIPT);
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    expect(await page.locator('tbody tr td:nth-child(1)').allTextContents()).to.deep.equal(['Receipt', 'Welcome mail']);
    expect(await page.locator('tbody tr td:nth-child(2)').allTextContents()).to.deep.equal(['receipt', 'welcome']);
    await page.getByRole('link', { name: 'Welcome mail' }).click();
    await page.waitForURL('**/dashboard/templates/welcome');
    await page.getByRole('heading', { name: 'Welcome mail', level: 1 }).waitFor();
    expect(await page.locator('pre.text-part').first().textContent()).to.equal('Hi');
    await context.close();
  });

  it('previews with the variables typed into the form: subject, HTML in a sandboxed frame (values escaped) and text', async function () {
    await publish(a, RECEIPT);
    const { page, close } = await openTemplate(a, 'receipt');
    expect(await page.locator('pre.text-part').first().textContent()).to.equal(RECEIPT.html);
    await page.getByLabel('name').fill('Ann <b>bold</b>');
    await page.getByLabel('total').fill('12.5');
    await page.getByLabel('items').fill('[{"title":"Mug"},{"title":"Tea"}]');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('.rendered-subject').waitFor();
    expect(await page.locator('.rendered-subject').textContent()).to.equal('Hi Ann <b>bold</b>');
    // the typed values stay in the form
    expect(await page.getByLabel('name').inputValue()).to.equal('Ann <b>bold</b>');

    const frame = page.frameLocator('iframe.preview');
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).to.equal('');
    // the value is text in the HTML part: one <b>, the template's own
    expect(await frame.locator('p b').textContent()).to.equal('Ann <b>bold</b>');
    expect(await frame.locator('b').count()).to.equal(1);
    expect(await frame.locator('i').allTextContents()).to.deep.equal(['Mug', 'Tea']);
    expect(await frame.locator('p').textContent()).to.include('€12.50');
    expect(await page.locator('#preview-result pre.text-part').textContent()).to.equal(
      'Hello Ann <b>bold</b>, total 12.5',
    );

    // the frame's document has its own policy: sandboxed, nothing fetched from elsewhere
    const src = await page.locator('iframe.preview').getAttribute('src');
    const res = await page.request.get(src!);
    expect(res.headers()['content-security-policy']).to.match(/^sandbox; default-src 'none'/);
    expect(await res.text()).to.include('<b>Ann &lt;b&gt;bold&lt;/b&gt;</b>');
    await close();
  });

  it('updates the preview as variables are typed, without submitting the form', async function () {
    await publish(a, RECEIPT);
    const { page, close } = await openTemplate(a, 'receipt');
    await page.getByLabel('total').fill('3');
    await page.getByLabel('items').fill('[]');
    // typing only: no click on Preview, and the document stays the same one
    await page.evaluate(() => ((globalThis as unknown as { mark: number }).mark = 7));
    await page.getByLabel('name').pressSequentially('Zoe');
    await page.locator('.rendered-subject', { hasText: 'Hi Zoe' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { mark?: number }).mark)).to.equal(7);
    expect(await page.locator('#preview-result pre.text-part').textContent()).to.equal('Hello Zoe, total 3');
    await close();
  });

  it('shows a refused render beside the form, naming the variable: missing, of the wrong kind, not JSON', async function () {
    await publish(a, { ...RECEIPT, id: 'refusals' });
    const { page, close } = await openTemplate(a, 'refusals');
    const preview = async () => {
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/preview')),
        page.getByRole('button', { name: 'Preview' }).click(),
      ]);
      await page.waitForLoadState();
      return res.status();
    };
    await page.getByLabel('total').fill('3');
    expect(await preview()).to.equal(400);
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).to.include('variables.name: is required by the template');
    expect(await page.getByLabel('name').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByLabel('total').inputValue()).to.equal('3');
    expect(await page.locator('iframe.preview').count()).to.equal(0);

    await page.getByLabel('name').fill('Ann');
    await page.getByLabel('items').fill('{"title":"Mug"}');
    expect(await preview()).to.equal(400);
    expect(await alert.textContent()).to.include('variables.items: must be an array (got object)');
    expect(await page.getByLabel('items').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByLabel('name').getAttribute('aria-invalid')).to.equal(null);

    await page.getByLabel('items').fill('[{"title": "Mug"');
    expect(await preview()).to.equal(400);
    expect(await alert.textContent()).to.include('variables.items: is declared as an array: give it as JSON');

    await page.getByLabel('items').fill('');
    await page.getByLabel('Language').fill('not a tag');
    expect(await preview()).to.equal(400);
    expect(await alert.textContent()).to.include('language');
    expect(await page.getByLabel('Language').getAttribute('aria-invalid')).to.equal('true');

    await page.getByLabel('Language').fill('de-DE');
    expect(await preview()).to.equal(200);
    expect(await page.getByRole('alert').count()).to.equal(0);
    expect(await page.locator('.rendered-subject').textContent()).to.equal('Hi Ann');
    await close();
  });

  it('restores version 1: a copy of it becomes the latest version', async function () {
    await publish(a, { id: 'restorable', name: 'Restorable', subject: 'First', text: 'one' });
    await publish(a, { id: 'restorable', subject: 'Second', text: 'two' });
    const { page, close } = await openTemplate(a, 'restorable');
    // the latest version has nothing to restore
    expect(await page.getByRole('button', { name: 'Restore version 2' }).count()).to.equal(0);
    await page.getByRole('link', { name: 'Version 1', exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get('version') === '1');
    expect(await page.getByRole('heading', { name: 'Version 1', level: 2 }).count()).to.equal(1);
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await page.waitForURL((u) => u.searchParams.get('restored') === '3');
    expect(await page.getByRole('status').textContent()).to.include('Version 3 is published, a copy of version 1');
    expect(await page.getByRole('heading', { level: 2, name: 'Version 3 (latest)' }).count()).to.equal(1);
    expect(await page.locator('tbody tr').first().textContent()).to.include('copy of version 1');

    const t = (await a.api.get('/v1/templates/restorable')).body as {
      latest_version: number;
      versions: Array<{ subject: string; restored_from: number | null }>;
    };
    expect(t.latest_version).to.equal(3);
    expect(t.versions[0]).to.include({ subject: 'First', restored_from: 1 });
    await close();
  });

  it('summarises a design version and previews the HTML made from it', async function () {
    await publish(a, {
      id: 'designed',
      subject: 'Designed',
      design: {
        blocks: [
          { type: 'heading', text: 'Hello {{ name }}' },
          { type: 'button', label: 'Open', url: 'https://example.com/' },
        ],
      },
      variables: { name: {} },
    });
    const { page, close } = await openTemplate(a, 'designed');
    expect(await page.getByRole('list', { name: 'Blocks' }).locator('li').allTextContents()).to.deep.equal([
      'heading: Hello {{ name }}',
      'button: Open',
    ]);
    await page.getByLabel('name').fill('Ann');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.frameLocator('iframe.preview').getByText('Hello Ann').waitFor();
    expect(await page.locator('#preview-result pre.text-part').textContent()).to.include('Hello Ann');
    await close();
  });

  it("never shows another project's templates: not in the list, and its pages, preview and restore are 404s", async function () {
    await publish(b, { id: 'secret-of-b', name: 'Secret of B', subject: 'Secret', text: 'secret' });
    const { page, close } = await openTemplate(a, 'receipt');
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    await page.goto('/dashboard/templates');
    expect(await page.locator('main').textContent()).to.not.include('Secret of B');
    const res = await page.goto('/dashboard/templates/secret-of-b');
    expect(res!.status()).to.equal(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Not found');
    expect(await page.locator('main').textContent()).to.not.include('Secret');
    expect((await page.goto('/dashboard/templates/secret-of-b/preview/html'))!.status()).to.equal(404);
    for (const path of ['restore', 'preview'])
      expect(
        (
          await page.request.post(`/dashboard/templates/secret-of-b/${path}`, { form: { csrf, version: '1' } })
        ).status(),
      ).to.equal(404);
    expect(((await b.api.get('/v1/templates/secret-of-b')).body as { latest_version: number }).latest_version).to.equal(
      1,
    );
    await close();
  });

  it('serves the preview result alone for a script, and refuses a key without templates:manage', async function () {
    const { page, close } = await openTemplate(a, 'receipt');
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const part = await page.request.post('/dashboard/templates/receipt/preview/part', {
      form: { csrf, version: '1', 'var.name': 'Bo', 'var.total': '1' },
    });
    expect(part.status()).to.equal(200);
    const fragment = await part.text();
    expect(fragment).to.match(/^<h3>Subject<\/h3>/);
    expect(fragment).to.include('Hi Bo');
    await close();

    const reader = await a.newKey({ scopes: ['emails:read'] });
    const { context, page: p } = await signedIn(browser, api.baseUrl, reader.key);
    expect((await p.goto('/dashboard/templates'))!.status()).to.equal(403);
    await context.close();
  });
});
