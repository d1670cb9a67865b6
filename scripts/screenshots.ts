// npm run screenshots: a PNG of each dashboard page, with the sample data of
// test/helpers/dashboard-sample.ts (the same pages the accessibility test
// checks), under docs/screenshots/: desktop size, and the email list and an
// email at phone size, and the first screen of the README's pages. Everything runs on loopback; Chromium is Debian's
// (CHROMIUM_PATH picks another).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { launchBrowser, signedIn } from '../test/helpers/browser.js';
import { dashboardSample } from '../test/helpers/dashboard-sample.js';

const OUT = join(PACKAGE_ROOT, 'docs', 'screenshots');
const PHONE = ['emails', 'email'];
// the README's pictures: the top 1,100 px of each (-top.png), where a whole page is too tall to show
const README = ['broadcast-edit', 'template-design', 'webhook'];

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const sample = await dashboardSample();
  const browser = await launchBrowser();
  try {
    const { context } = await signedIn(browser, sample.api.baseUrl, sample.key);
    for (const [name, path] of Object.entries(sample.pages)) {
      // the sign-in page as a visitor sees it
      const ctx = name === 'sign-in' ? await browser.newContext({ baseURL: sample.api.baseUrl }) : context;
      for (const [suffix, viewport] of [
        ['', { width: 1280, height: 800 }],
        ...(PHONE.includes(name) ? [['-phone', { width: 390, height: 844 }]] : []),
      ] as Array<[string, { width: number; height: number }]>) {
        const page = await ctx.newPage();
        await page.setViewportSize(viewport);
        await page.goto(path, { waitUntil: 'networkidle' });
        // a frame (an email's HTML) is drawn once it has been on screen: a full-page shot alone leaves it blank
        for (const frame of await page.locator('iframe').all()) await frame.scrollIntoViewIfNeeded();
        await page.evaluate('window.scrollTo(0, 0)');
        await page.screenshot({ path: join(OUT, `${name}${suffix}.png`), fullPage: true });
        console.log(`docs/screenshots/${name}${suffix}.png`);
        if (!suffix && README.includes(name)) {
          await page.screenshot({
            path: join(OUT, `${name}-top.png`),
            fullPage: true,
            clip: { x: 0, y: 0, width: viewport.width, height: 1100 },
          });
          console.log(`docs/screenshots/${name}-top.png`);
        }
        await page.close();
      }
      if (ctx !== context) await ctx.close();
    }
  } finally {
    await browser.close();
    await sample.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
