// The dashboard phase: each page of the dashboard, with the sample data of
// `npm run screenshots` (test/helpers/dashboard-sample.ts, an appliance of its
// own in this process), loaded five times in headless Chromium over loopback.
// Reported per page: the median time to DOMContentLoaded (the deferred script
// has run: the page is interactive) and to load, and the bytes transferred
// (the document, its script and stylesheet, and the frames). The targets
// (bench/targets.ts): under 500 ms to interactive and under 200 KB. Skipped, saying so, when Chromium is absent.
import { existsSync } from 'node:fs';
import { CHROMIUM, launchBrowser, signedIn } from '../test/helpers/browser.js';
import { dashboardSample } from '../test/helpers/dashboard-sample.js';

const LOADS = 5;

export interface DashboardFigures {
  available: boolean;
  reason?: string;
  pages?: Record<string, { interactive_ms: number; load_ms: number; kb: number }>;
  slowest_interactive_ms?: number;
  largest_kb?: number;
}

export async function dashboardPhase(): Promise<DashboardFigures> {
  if (!existsSync(CHROMIUM))
    return { available: false, reason: `no Chromium at ${CHROMIUM} (apt-get install chromium)` };
  const sample = await dashboardSample();
  const browser = await launchBrowser();
  try {
    const { context } = await signedIn(browser, sample.api.baseUrl, sample.key);
    const signed = await context.storageState();
    const pages: NonNullable<DashboardFigures['pages']> = {};
    for (const [name, path] of Object.entries(sample.pages)) {
      if (name === 'sign-in') continue;
      const runs: Array<{ interactive: number; load: number; bytes: number }> = [];
      for (let i = 0; i < LOADS; i++) {
        // a first visit each time: a new profile (nothing cached) with the session's cookie
        const fresh = await browser.newContext({ baseURL: sample.api.baseUrl, storageState: signed });
        const page = await fresh.newPage();
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
        const t = await page.evaluate<string>('JSON.stringify(performance.getEntriesByType("navigation")[0])');
        const nav = JSON.parse(t) as { domContentLoadedEventEnd: number; loadEventEnd: number };
        await page.waitForLoadState('networkidle');
        const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
        await fresh.close();
        runs.push({ interactive: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, bytes });
      }
      const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      pages[name] = {
        interactive_ms: Math.round(median(runs.map((r) => r.interactive))),
        load_ms: Math.round(median(runs.map((r) => r.load))),
        kb: Math.round(median(runs.map((r) => r.bytes)) / 102.4) / 10,
      };
    }
    const all = Object.values(pages);
    return {
      available: true,
      pages,
      slowest_interactive_ms: Math.max(...all.map((p) => p.interactive_ms)),
      largest_kb: Math.max(...all.map((p) => p.kb)),
    };
  } finally {
    await browser.close();
    await sample.stop();
  }
}
