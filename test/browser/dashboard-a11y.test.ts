import { expect } from 'chai';
import type { Browser, BrowserContext } from 'playwright-core';
import { dashboardSample, type DashboardSample } from '../helpers/dashboard-sample.js';
import { launchBrowser, signedIn } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';

// Every page of the dashboard, with sample data, checked with axe-core (WCAG 2.1 A and AA rules)
// on a desktop and on a phone-sized viewport; and what the first page costs to load.
describe('the dashboard is accessible and light (axe-core on every page)', function () {
  this.timeout(180_000);
  let sample: DashboardSample;
  let browser: Browser;
  let context: BrowserContext;
  before(async function () {
    sample = await dashboardSample();
    browser = await launchBrowser();
    context = (await signedIn(browser, sample.api.baseUrl, sample.key)).context;
  });
  after(async function () {
    await browser?.close();
    await sample?.stop();
  });

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`finds no serious or critical violation on any page (${viewport.name})`, async function () {
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      const found: string[] = [];
      for (const [name, path] of Object.entries(sample.pages)) {
        // the sign-in page is seen signed out
        const p =
          name === 'sign-in'
            ? await (await browser.newContext({ baseURL: sample.api.baseUrl, viewport })).newPage()
            : page;
        const res = await p.goto(path);
        expect(res!.status(), `${name} ${path}`).to.equal(200);
        found.push(...(await axeViolations(p, name)));
        // nothing wider than the screen on a phone: the page scrolls down, not sideways
        if (viewport.name === 'phone') {
          const overflow = await p.evaluate(
            () =>
              (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } })
                .document.documentElement.scrollWidth -
              (globalThis as unknown as { document: { documentElement: { clientWidth: number } } }).document
                .documentElement.clientWidth,
          );
          if (overflow > 1) found.push(`${name}: ${overflow}px wider than a ${viewport.width}px screen`);
        }
        if (p !== page) await p.context().close();
      }
      expect(found).to.deep.equal([]);
    });
  }

  it('sends each page with its script and stylesheet in under 200 KB', async function () {
    // a first visit: the browser's cache off, so that each page fetches its script and stylesheet again
    const weigh = async ([name, path]: [string, string]) => {
      const page = await (name === 'sign-in' ? visitor : context).newPage();
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      // each body's size, awaited before the sum: a response may still be read when the page is idle
      const sizes: Array<Promise<number>> = [];
      page.on('response', (r) =>
        sizes.push(
          r.body().then(
            (b) => b.length,
            () => 0,
          ),
        ),
      );
      await page.goto(path, { waitUntil: 'load' });
      await page.waitForLoadState('networkidle');
      const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      await page.close();
      return { name, bytes };
    };
    const visitor = await browser.newContext({ baseURL: sample.api.baseUrl });
    // four pages at a time: each waits half a second of quiet network ("networkidle"), not for the CPU
    const pages = Object.entries(sample.pages);
    const weighed: Array<{ name: string; bytes: number }> = [];
    for (let i = 0; i < pages.length; i += 4) weighed.push(...(await Promise.all(pages.slice(i, i + 4).map(weigh))));
    await visitor.close();
    expect(weighed).to.have.length(pages.length);
    for (const { name, bytes } of weighed)
      expect(bytes, name)
        .to.be.greaterThan(1000)
        .and.below(200 * 1024);
  });
});
