import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Tenant } from '../helpers/api.js';
import { axeViolations } from '../helpers/axe.js';
import { launchBrowser } from '../helpers/browser.js';
import { startLiveWorld, verifiedDomain, type LiveWorld } from '../helpers/live.js';
import { signPreferenceToken } from '../../src/modules/audience/preferences/preference-token.js';

const PUBLIC = 'https://signup.browser.test';

// A person signs up on a form's page in headless Chromium, confirms by the link mailed to the
// test sink through the live send path, then changes their topics on the preference page.
describe('a signup form and the preference page in a browser (issue 27)', function () {
  this.timeout(90_000);
  let w: LiveWorld;
  let t: Tenant;
  let browser: Browser;
  let context: BrowserContext;
  let form: { id: string; url: string };
  let audience: { id: string };
  let news: { id: string };
  let beta: { id: string };
  const local = (url: string) => url.replace(PUBLIC, w.api.baseUrl);

  before(async function () {
    w = await startLiveWorld('dkim.signup.test', 'mta.signup.test', { http: { public_url: PUBLIC } });
    t = await w.api.tenant({ mode: 'live' });
    const domain = await verifiedDomain(t, w.world);
    audience = (await t.api.post('/v1/audiences', { name: 'Newsletter' })).body;
    news = (
      await t.api.post('/v1/topics', {
        name: 'Product news',
        description: 'What we ship, once a month',
        default: 'opt_out',
      })
    ).body;
    beta = (await t.api.post('/v1/topics', { name: 'Beta invites', default: 'opt_in' })).body;
    const res = await t.api.post('/v1/forms', {
      name: 'The Shop newsletter',
      audience_id: audience.id,
      from: `The Shop <news@${domain.domain}>`,
      fields: ['first_name', 'last_name'],
    });
    expect(res.status, res.text).to.equal(201);
    form = res.body;
    browser = await launchBrowser();
    context = await browser.newContext();
  });
  after(async function () {
    await browser?.close();
    await w?.stop();
  });

  it('signs up, confirms by the mailed link, and changes topics and unsubscribes on the preference page', async function () {
    const email = 'reader@ok.test';
    const page = await context.newPage();
    await page.goto(local(form.url));
    expect(await axeViolations(page, 'form page')).to.deep.equal([]);
    // the honeypot is out of the accessibility tree: two names and the address are the only text fields
    expect(await page.getByRole('textbox').count()).to.equal(3);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('First name').fill('Rae');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    expect((await t.api.get(`/v1/contacts/${email}`)).body).to.deep.include({ pending: true, audiences: [] });

    const mail = await simpleParser((await w.sink.waitForMessage(email)).raw);
    const link = new RegExp(`${PUBLIC.replace(/\./g, '\\.')}/f/${form.id}/confirm/[0-9a-z-]+`).exec(
      mail.text ?? '',
    )![0];
    await page.goto(local(link));
    expect(await axeViolations(page, 'confirmation page')).to.deep.equal([]);
    expect((await t.api.get(`/v1/contacts/${email}`)).body.pending, 'opening the link confirms nothing').to.equal(true);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Subscription confirmed' }).waitFor();
    const contact = (await t.api.get(`/v1/contacts/${email}`)).body;
    expect(contact).to.deep.include({ pending: false, first_name: 'Rae', audiences: [audience.id] });
    expect(contact.topics).to.deep.equal({ [news.id]: true, [beta.id]: false });

    const prefs = `${PUBLIC}/p/${signPreferenceToken(await w.api.deps.tracking.key(), contact.id)}`;
    expect(await page.getByRole('link', { name: 'your preference page' }).getAttribute('href')).to.equal(prefs);
    await page.goto(local(prefs));
    expect(await axeViolations(page, 'preference page')).to.deep.equal([]);
    expect(await page.getByLabel('Product news').isChecked()).to.equal(true);
    expect(await page.getByLabel('Beta invites').isChecked()).to.equal(false);
    await page.getByLabel('Product news').uncheck();
    await page.getByLabel('Beta invites').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect(await page.getByLabel('Beta invites').isChecked()).to.equal(true);
    expect((await t.api.get(`/v1/contacts/${email}`)).body).to.deep.include({
      unsubscribed: false,
      topics: { [news.id]: false, [beta.id]: true },
    });

    await page.getByLabel('Unsubscribe from all broadcast mail').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect((await t.api.get(`/v1/contacts/${email}`)).body.unsubscribed).to.equal(true);
    expect(await axeViolations(page, 'preference page, saved')).to.deep.equal([]);
    // on a phone-sized screen the page scrolls down, not sideways
    await page.setViewportSize({ width: 390, height: 844 });
    expect(
      await page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } })
            .document.documentElement.scrollWidth -
          (globalThis as unknown as { document: { documentElement: { clientWidth: number } } }).document.documentElement
            .clientWidth,
      ),
    ).to.be.at.most(1);
  });

  it('sends the person to the form’s redirect_url after a submission: the page’s policy lets its form go there', async function () {
    const made = await t.api.post('/v1/forms', {
      name: 'Redirecting',
      audience_id: audience.id,
      double_opt_in: false,
      redirect_url: 'https://thanks.signup.test/done?from=form',
    });
    expect(made.status, made.text).to.equal(201);
    const ctx = await browser.newContext();
    try {
      // nothing leaves loopback: the redirect's target is answered here, anything else refused and noted
      const leaving: string[] = [];
      const loopback = (url: URL) => ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
      await ctx.route(
        (url) => !loopback(url),
        async (route) => {
          const url = new URL(route.request().url());
          if (url.origin === 'https://thanks.signup.test')
            return route.fulfill({
              status: 200,
              contentType: 'text/html',
              body: '<!doctype html><title>Thanks</title><h1>Thanks for signing up</h1>',
            });
          leaving.push(url.href);
          return route.abort();
        },
      );
      const page = await ctx.newPage();
      const refused: string[] = [];
      page.on('console', (m) => void (/Content Security Policy|form-action/i.test(m.text()) && refused.push(m.text())));
      await page.goto(local(made.body.url));
      await page.getByLabel('Email address').fill('redirected@ok.test');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.waitForURL('https://thanks.signup.test/done?from=form', { timeout: 10_000 });
      await page.getByRole('heading', { name: 'Thanks for signing up' }).waitFor();
      expect(refused).to.deep.equal([]);
      expect(leaving).to.deep.equal([]);
      expect((await t.api.get('/v1/contacts/redirected@ok.test')).body).to.deep.include({
        pending: false,
        audiences: [audience.id],
      });
    } finally {
      await ctx.close();
    }
  });
});
