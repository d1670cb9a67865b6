// npm run render-sample: render the sample design (test/fixtures/sample-design.ts)
// to docs/template-sample.html and a full-page screenshot docs/template-sample.png,
// in headless Chromium with the network shut (the images are data: URIs).
// `--dark` also writes docs/template-sample-dark.png with the dark color scheme.
// `--blocks` writes, instead, one PNG per block type under
// docs/screenshots/blocks/ (docs/templates.md links them): a design of that
// sample block alone, cropped to the 600 px card.
// CHROMIUM_PATH picks the browser (default /usr/bin/chromium).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { checkDesign, designToSource } from '../src/modules/sending/templates/design/design-source.js';
import {
  BLOCK_TYPES,
  type Block,
  type BlockType,
  type Design,
} from '../src/modules/sending/templates/design/design.schema.js';
import { compileTemplate, renderTemplate } from '../src/modules/sending/templates/language/index.js';
import { SAMPLE_DECLARED, SAMPLE_DESIGN, SAMPLE_VARIABLES } from '../test/fixtures/sample-design.js';

function renderDesign(design: Design): { html: string; text: string } {
  checkDesign(design, SAMPLE_DECLARED);
  const source = designToSource(design);
  const render = (s: string, field: string, html: boolean) =>
    renderTemplate(compileTemplate(s, field, SAMPLE_DECLARED, { urlFields: true }), SAMPLE_VARIABLES, {
      html,
      language: 'en',
    });
  return { html: render(source.html, 'design', true), text: render(source.text, 'design', false) };
}

/** The sample's first block of `type`; a divider and a spacer between two lines of text, which show what they do. */
function blockDesign(type: BlockType): Design {
  const block = SAMPLE_DESIGN.blocks.find((b) => b.type === type)!;
  const around = (b: Block): Block[] => [
    { type: 'text', text: `Text above the ${type}.` },
    b,
    { type: 'text', text: `Text below the ${type}.` },
  ];
  return { ...SAMPLE_DESIGN, blocks: type === 'divider' || type === 'spacer' ? around(block) : [block] };
}

async function withPage(colorScheme: 'light' | 'dark', use: (page: Page) => Promise<void>): Promise<void> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
  try {
    const page = await browser.newPage({ viewport: { width: 700, height: 900 }, colorScheme });
    await page.route('**/*', (route) =>
      /^(data|about):/.test(route.request().url()) ? route.continue() : route.abort(),
    );
    await use(page);
  } finally {
    await browser.close();
  }
}

const docs = join(PACKAGE_ROOT, 'docs');
if (process.argv.includes('--blocks')) {
  const out = join(docs, 'screenshots', 'blocks');
  mkdirSync(out, { recursive: true });
  await withPage('light', async (page) => {
    for (const type of BLOCK_TYPES) {
      await page.setContent(renderDesign(blockDesign(type)).html, { waitUntil: 'load' });
      await page.locator('table.ph-card').screenshot({ path: join(out, `${type}.png`) });
      console.log(`docs/screenshots/blocks/${type}.png`);
    }
  });
} else {
  const { html, text } = renderDesign(SAMPLE_DESIGN);
  writeFileSync(join(docs, 'template-sample.html'), html);
  const shoot = (scheme: 'light' | 'dark', path: string) =>
    withPage(scheme, async (page) => {
      await page.setContent(html, { waitUntil: 'load' });
      await page.screenshot({ path, fullPage: true });
    });
  await shoot('light', join(docs, 'template-sample.png'));
  if (process.argv.includes('--dark')) await shoot('dark', join(docs, 'template-sample-dark.png'));
  if (process.argv.includes('--text')) process.stdout.write(text);
}
