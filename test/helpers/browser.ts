import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestApi, type TestApi } from './api.js';
import { freshSqlite, type TestDatabase } from './databases.js';

/** Debian's chromium (.ci/run installs it); CHROMIUM_PATH picks another. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless Chromium through playwright-core, which downloads nothing: a missing browser fails the run. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** A fresh browser profile (its own cookies) signed in to the dashboard at `baseUrl` with `key`. */
export async function signedIn(
  browser: Browser,
  baseUrl: string,
  key: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: baseUrl });
  const page = await context.newPage();
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/emails');
  return { context, page };
}

/**
 * Presses Tab until the focused element matches `selector` (at most `max` times), as a keyboard user
 * moves through a page; fails when it never gets there.
 */
export async function tabTo(page: Page, selector: string, max = 120): Promise<void> {
  const there = () =>
    page.evaluate(
      (s) =>
        (
          globalThis as unknown as { document: { activeElement: { matches(s: string): boolean } | null } }
        ).document.activeElement?.matches(s) ?? false,
      selector,
    );
  for (let i = 0; i < max; i++) {
    if (await there()) return;
    await page.keyboard.press('Tab');
  }
  if (!(await there())) throw new Error(`Tab never reached ${selector} in ${max} presses`);
}

/** What a browser test of the dashboard runs against: a SQLite file, the appliance in process, Chromium. */
export interface DashboardWorld {
  db: TestDatabase;
  api: TestApi;
  browser: Browser;
}

/**
 * The world of the describe it is called in, started in its `before` and stopped in its `after`; the
 * arguments are startTestApi's after the store (config overrides, roles).
 */
export function dashboardWorld(...options: Parameters<typeof startTestApi> extends [unknown, ...infer R] ? R : never) {
  const w = {} as DashboardWorld;
  before(async function () {
    w.db = freshSqlite();
    await w.db.store.migrateLatest();
    w.api = await startTestApi(w.db.store, ...options);
    w.browser = await launchBrowser();
  });
  after(async function () {
    await w.browser?.close();
    await w.api?.stop();
    await w.db?.drop();
  });
  return w;
}
