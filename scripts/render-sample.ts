// npm run render-sample: render the sample design (test/fixtures/sample-design.ts)
// to docs/template-sample.html and a full-page screenshot docs/template-sample.png,
// in headless Chromium with the network shut (the images are data: URIs).
// `--dark` also writes docs/template-sample-dark.png with the dark color scheme.
// CHROMIUM_PATH picks the browser (default /usr/bin/chromium).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { checkDesign, designToSource } from '../src/modules/templates/design/design-source.js';
import { compileTemplate, renderTemplate } from '../src/modules/templates/language/index.js';
import { SAMPLE_DECLARED, SAMPLE_DESIGN, SAMPLE_VARIABLES } from '../test/fixtures/sample-design.js';

function renderSample(): { html: string; text: string } {
  checkDesign(SAMPLE_DESIGN, SAMPLE_DECLARED);
  const source = designToSource(SAMPLE_DESIGN);
  const render = (s: string, field: string, html: boolean) => renderTemplate(compileTemplate(s, field, SAMPLE_DECLARED), SAMPLE_VARIABLES, { html, language: 'en' });
  return { html: render(source.html, 'design', true), text: render(source.text, 'design', false) };
}

async function screenshot(html: string, path: string, colorScheme: 'light' | 'dark'): Promise<void> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
  try {
    const page = await browser.newPage({ viewport: { width: 700, height: 900 }, colorScheme });
    await page.route('**/*', (route) => (/^(data|about):/.test(route.request().url()) ? route.continue() : route.abort()));
    await page.setContent(html, { waitUntil: 'load' });
    await page.screenshot({ path, fullPage: true });
  } finally {
    await browser.close();
  }
}

const { html, text } = renderSample();
const docs = join(PACKAGE_ROOT, 'docs');
writeFileSync(join(docs, 'template-sample.html'), html);
await screenshot(html, join(docs, 'template-sample.png'), 'light');
if (process.argv.includes('--dark')) await screenshot(html, join(docs, 'template-sample-dark.png'), 'dark');
if (process.argv.includes('--text')) process.stdout.write(text);
