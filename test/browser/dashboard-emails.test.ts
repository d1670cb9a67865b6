import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { launchBrowser, signedIn } from '../helpers/browser.js';
import { client } from '../helpers/http.js';

const TO = 'delivered@simulator.posthorn.test';

// The dashboard in headless Chromium against the real appliance (API, queue worker, SQLite).
describe('the dashboard in a browser: sign-in, emails and their timeline', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let api: TestApi;
  let browser: Browser;
  let a: Tenant;
  let b: Tenant;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(db.store, {}, { roles: { mta: true } });
    browser = await launchBrowser();
    a = await api.tenant();
    b = await api.tenant();
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await db?.drop();
  });

  const send = async (t: Tenant, subject: string, extra: Record<string, unknown> = {}) => {
    const r = await t.api.post('/v1/emails', {
      from: 'Shop <shop@example.com>',
      to: [TO],
      subject,
      html: `<p>Hello <b>${subject}</b></p>`,
      text: `Hello ${subject}`,
      ...extra,
    });
    expect(r.status, r.text).to.equal(202);
    return r.body as { id: string };
  };

  it('signs in with a key into a session cookie (HttpOnly, SameSite=Strict) and refuses a wrong key', async function () {
    const context = await browser.newContext({ baseURL: api.baseUrl });
    const page = await context.newPage();
    await page.goto('/dashboard/emails');
    // not signed in: sent to the sign-in page, which remembers where it was going
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await page.getByLabel('API key').fill('ph_test_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // textContent() waits for the alert, which only the page answering the refused key has
    expect(await page.getByRole('alert').textContent()).to.include('not valid');
    expect(await context.cookies()).to.have.length(0);

    await page.getByLabel('API key').fill(a.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/emails');
    await page.getByRole('heading', { name: 'Emails' }).waitFor();
    expect(await page.locator('header').textContent()).to.include(a.project.name);
    const [cookie] = await context.cookies();
    expect(cookie).to.include({ name: 'posthorn_session', httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    // the key is not what the browser keeps
    expect(cookie.value).to.not.include(a.key);
    expect(await page.content()).to.not.include(a.key);
    await context.close();
  });

  it("shows an email's timeline reaching delivered without a reload, with its HTML and text", async function () {
    // scheduled an hour ahead, so that it is surely still waiting when the page opens on a slow
    // machine; brought forward once the page shows it
    const email = await send(a, 'Order 1', { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const { context, page } = await signedIn(browser, api.baseUrl, a.key);
    await page.getByRole('link', { name: 'Order 1' }).click();
    await page.waitForURL(`**/dashboard/emails/${email.id}`);
    const state = page.locator('[data-live-src]');
    expect(await state.getByRole('heading', { name: /Status/ }).textContent()).to.include('scheduled');
    // a mark on this very document: still there afterwards means the page was never reloaded
    await page.evaluate(() => ((globalThis as unknown as { mark: number }).mark = 42));
    const soon = await a.api.patch(`/v1/emails/${email.id}`, {
      scheduled_at: new Date(Date.now() + 1000).toISOString(),
    });
    expect(soon.status, soon.text).to.equal(200);
    await state.locator('.badge', { hasText: 'delivered' }).first().waitFor({ timeout: 15_000 });
    await state.locator('.timeline .ev-type', { hasText: 'delivered' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { mark?: number }).mark)).to.equal(42);
    // the heading says what happened to the recipients (the email itself is `accepted`, in the badge's title)
    const heading = state.getByRole('heading', { name: /Status/ });
    expect(await heading.textContent()).to.include('delivered');
    expect(await heading.locator('.badge').getAttribute('title')).to.equal(
      'email accepted; 1 of 1 recipient delivered',
    );
    const types = await state.locator('.timeline .ev-type').allTextContents();
    expect(types).to.include.members(['queued', 'scheduled', 'sent', 'delivered']);
    expect(types[0]).to.equal('queued');

    // the HTML in a sandboxed frame (no scripts), the text part as text
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).to.equal('');
    expect(await page.frameLocator('iframe.preview').locator('b').textContent()).to.equal('Order 1');
    expect(await page.locator('pre.text-part').textContent()).to.equal('Hello Order 1');
    await context.close();
  });

  it('can be used with the keyboard alone: sign in, skip to the content, open an email', async function () {
    await send(a, 'Keyboard order');
    const context = await browser.newContext({ baseURL: api.baseUrl });
    const page = await context.newPage();
    await page.goto('/dashboard/sign-in');
    const focused = () =>
      page.evaluate(() => {
        const el = (
          globalThis as unknown as {
            document: { activeElement: { id: string; textContent: string | null; tagName: string } | null };
          }
        ).document.activeElement;
        // a container (the page, <main>) by its tag only: its text is the whole page's
        const interactive = el && ['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName);
        return el
          ? `${el.tagName.toLowerCase()}#${el.id}${interactive ? `:${(el.textContent ?? '').trim()}` : ''}`
          : '';
      });
    for (let i = 0; i < 6 && !(await focused()).startsWith('input#key'); i++) await page.keyboard.press('Tab');
    expect(await focused()).to.match(/^input#key/);
    await page.keyboard.type(a.key);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/emails');
    // the first Tab lands on the skip link, which moves past the navigation
    await page.keyboard.press('Tab');
    expect(await focused()).to.equal('a#:Skip to content');
    await page.keyboard.press('Enter');
    // following the in-page link is a navigation of its own: wait for it (up to the test's timeout)
    await page.waitForFunction(
      () => (globalThis as unknown as { location: { hash: string } }).location.hash === '#main',
    );
    expect(new URL(page.url()).hash).to.equal('#main');
    // then on to the first email's link, and Enter opens it
    expect(await focused()).to.equal('main#main');
    for (let i = 0; i < 30 && !(await focused()).includes('Keyboard order'); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/emails/msg_*');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Keyboard order');
    await context.close();
  });

  it("shows a bounce in the timeline with its type, reason and the server's diagnostic", async function () {
    const r = await a.api.post('/v1/emails', {
      from: 'shop@example.com',
      to: ['bounced@simulator.posthorn.test'],
      subject: 'Bounce me',
      text: 'x',
    });
    const { context, page } = await signedIn(browser, api.baseUrl, a.key);
    await page.goto(`/dashboard/emails/${r.body.id}`);
    const bounced = page.locator('.timeline li.t-email-bounced');
    await bounced.waitFor({ timeout: 15_000 });
    const text = (await bounced.textContent())!;
    expect(text).to.include('bounce type').and.include('Permanent').and.include('reason').and.include('diagnostic');
    // the reason says what it means, and the recipient's row what a live bounce like it does to the address
    expect(text).to.include('user_unknown: the mailbox does not exist');
    const why = (await page.locator('td.why').textContent())!;
    expect(why).to.include('user_unknown').and.include('a live bounce like this suppresses the address');
    await context.close();
  });

  it('cancels a scheduled email from its page: none of its recipients gets it, and the button is gone', async function () {
    const email = await send(a, 'Changed my mind', { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const { context, page } = await signedIn(browser, api.baseUrl, a.key);
    await page.goto(`/dashboard/emails/${email.id}`);
    await page.getByRole('button', { name: 'Cancel this email' }).click();
    await page.waitForURL(`**/dashboard/emails/${email.id}`);
    await page.locator('.badge', { hasText: 'cancelled' }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Cancel this email' }).count()).to.equal(0);
    expect((await a.api.get(`/v1/emails/${email.id}`)).body.status).to.equal('cancelled');
    // another project's email cannot be cancelled through the dashboard
    const theirs = await send(b, 'Theirs', { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const res = await page.request.post(`/dashboard/emails/${theirs.id}/cancel`, {
      form: { csrf: await page.locator('input[name="csrf"]').first().inputValue() },
      headers: { origin: api.baseUrl },
    });
    expect(res.status()).to.equal(404);
    expect((await b.api.get(`/v1/emails/${theirs.id}`)).body.status).to.equal('scheduled');
    await context.close();
  });

  it('filters emails by status, recipient, tag and day, newest first', async function () {
    const t = await api.tenant();
    await send(t, 'First', { tags: { kind: 'receipt' } });
    await send(t, 'Second');
    await send(t, 'Later', { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    const subjects = () => page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(await subjects()).to.deep.equal(['Later', 'Second', 'First']);
    await page.getByLabel('Status').selectOption('scheduled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.searchParams.get('status') === 'scheduled');
    expect(await subjects()).to.deep.equal(['Later']);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Recipient').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No emails match these filters.').waitFor();
    await page.getByLabel('Recipient').fill('');
    await page.getByLabel('Tag').fill('kind:receipt');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.searchParams.get('tag') === 'kind:receipt');
    expect(await subjects()).to.deep.equal(['First']);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Tag').fill('');
    await page.getByLabel('From day (UTC)').fill(today);
    await page.getByLabel('Until day (UTC)').fill(today);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.searchParams.get('until') === today);
    expect(await subjects()).to.deep.equal(['Later', 'Second', 'First']);
    await page.getByLabel('Until day (UTC)').fill(yesterday);
    await page.getByLabel('From day (UTC)').fill(yesterday);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No emails match these filters.').waitFor();
    await context.close();
  });

  it("the list's badge is green only when every recipient is delivered, else the worst recipient outcome; counts and a filter by it", async function () {
    // an appliance without a queue worker: test mail is simulated as it is stored, and a delayed
    // recipient stays deferred (no retry comes), so every state below holds still
    const still = freshSqlite();
    await still.store.migrateLatest();
    const alone = await startTestApi(still.store);
    try {
      const t = await alone.tenant();
      const sim = (local: string) => `${local}@simulator.posthorn.test`;
      const cases: Array<[string, string[], string]> = [
        ['All delivered', [sim('delivered'), 'ann@example.com'], 'delivered'],
        ['One bounced', [sim('delivered'), sim('bounced')], 'bounced'],
        ['One deferred', [sim('delivered'), sim('delayed')], 'deferred'],
        ['One complained', [sim('delivered'), sim('complained')], 'complained'],
        ['One ambiguous', [sim('delivered'), sim('ambiguous')], 'ambiguous'],
      ];
      for (const [subject, to] of cases) {
        const r = await t.api.post('/v1/emails', { from: 'shop@example.com', to, subject, text: 'x' });
        expect(r.status, r.text).to.equal(202);
        // the email itself says accepted: one of its recipients was delivered
        expect((await t.api.get(`/v1/emails/${r.body.id}`)).body.status, subject).to.equal('accepted');
      }
      const { context, page } = await signedIn(browser, alone.baseUrl, t.key);
      // the colour the stylesheet gives a delivered badge
      const green = await page.evaluate(() => {
        const w = globalThis as unknown as {
          document: {
            createElement(t: string): { className: string; remove(): void };
            body: { append(e: unknown): void };
          };
          getComputedStyle(e: unknown): { color: string };
        };
        const probe = w.document.createElement('span');
        probe.className = 'badge s-delivered';
        w.document.body.append(probe);
        const colour = w.getComputedStyle(probe).color;
        probe.remove();
        return colour;
      });
      for (const [subject, , outcome] of cases) {
        const b = page.locator('tbody tr', { has: page.getByRole('link', { name: subject }) }).locator('.badge');
        expect((await b.textContent())?.trim(), subject).to.equal(outcome);
        const colour = await b.evaluate(
          (el) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color,
        );
        if (outcome === 'delivered') expect(colour, subject).to.equal(green);
        else expect(colour, subject).to.not.equal(green);
        // beside it, how many recipients are in each state, the worst first
        const counts = await page
          .locator('tbody tr', { has: page.getByRole('link', { name: subject }) })
          .locator('ul.counts li')
          .allTextContents();
        expect(counts, subject).to.deep.equal(
          outcome === 'delivered' ? ['2 delivered'] : [`1 ${outcome}`, '1 delivered'],
        );
      }
      // the filter by a recipient's outcome finds the email whose status alone says accepted
      await page.getByLabel('Outcome').selectOption('bounced');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/outcome=bounced/);
      expect(await page.locator('tbody tr a').allTextContents()).to.deep.equal(['One bounced']);
      await context.close();
    } finally {
      await alone.stop();
      await still.drop();
    }
  });

  it("never shows another project's emails: not in the list, and its email's page is a 404", async function () {
    const theirs = await send(b, 'Secret of B');
    const { context, page } = await signedIn(browser, api.baseUrl, a.key);
    expect(await page.locator('main').textContent()).to.not.include('Secret of B');
    const res = await page.goto(`/dashboard/emails/${theirs.id}`);
    expect(res!.status()).to.equal(404);
    expect(await page.locator('main').textContent()).to.not.include('Secret of B');
    for (const part of ['state', 'html'])
      expect((await page.goto(`/dashboard/emails/${theirs.id}/${part}`))!.status()).to.equal(404);
    await context.close();
  });

  it('signs out: the session ends on the server, and its cookie opens nothing any more', async function () {
    const { context, page } = await signedIn(browser, api.baseUrl, a.key);
    const [cookie] = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/sign-in');
    await page.goto('/dashboard/emails');
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    // the old cookie, sent by hand, is refused too
    const r = await fetch(`${api.baseUrl}/dashboard/emails`, {
      headers: { cookie: `posthorn_session=${cookie.value}` },
      redirect: 'manual',
    });
    expect(r.status).to.equal(303);
    expect(r.headers.get('location')).to.match(/^\/dashboard\/sign-in/);
    await context.close();
  });

  it('ends the sessions of a revoked key at their next page', async function () {
    const t = await api.tenant();
    const second = await t.newKey({ scopes: ['emails:read'] });
    const { context, page } = await signedIn(browser, api.baseUrl, second.key);
    expect((await client(api.baseUrl, t.key).delete(`/v1/api-keys/${second.id}`)).status).to.equal(200);
    await page.goto('/dashboard/emails');
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await context.close();
  });
});
