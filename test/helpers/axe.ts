import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** The serious and critical violations axe-core finds on the page (WCAG 2.1 A and AA rules, best practices), one line each. */
export async function axeViolations(page: Page, name: string): Promise<string[]> {
  // evaluated through the driver, which the page's CSP does not govern
  await page.evaluate(AXE);
  const violations = (
    await page.evaluate(() =>
      (globalThis as unknown as { axe: { run(o: object): Promise<{ violations: AxeViolation[] }> } }).axe.run({
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      }),
    )
  ).violations;
  return violations
    .filter((x) => x.impact === 'serious' || x.impact === 'critical')
    .map((v) => `${name}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
