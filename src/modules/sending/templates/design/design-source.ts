import { conditionOf } from './check-design.js';
import type { Block, Design } from './design.schema.js';
import {
  buttonHtml,
  dividerHtml,
  footerHtml,
  headingHtml,
  imageHtml,
  listHtml,
  logoHtml,
  quoteHtml,
  spacerHtml,
  textHtml,
} from './html-blocks.js';
import {
  columnsHtml,
  discountHtml,
  eventHtml,
  productHtml,
  ratingHtml,
  signatureHtml,
  socialHtml,
  tableHtml,
} from './html-blocks-rich.js';
import { documentHtml } from './html-document.js';
import type { HtmlContext } from './html-parts.js';
import { paletteOf } from './palette.js';
import { blockText } from './text-blocks.js';

// A design → the template-language sources of its HTML and text parts. The
// placeholders stay in them: the result is compiled and rendered per send
// like any hand-written template. The fields were checked one by one before
// (checkDesign), so a mistake is reported against its block field, never
// against a line of this generated HTML.

export { checkDesign } from './check-design.js';

function blockHtml(b: Block, ctx: HtmlContext): string {
  switch (b.type) {
    case 'heading':
      return headingHtml(b, ctx);
    case 'text':
      return textHtml(b, ctx);
    case 'button':
      return buttonHtml(b, ctx);
    case 'image':
      return imageHtml(b);
    case 'divider':
      return dividerHtml(b, ctx);
    case 'spacer':
      return spacerHtml(b);
    case 'footer':
      return footerHtml(b, ctx);
    case 'logo':
      return logoHtml(b);
    case 'columns':
      return columnsHtml(b, ctx);
    case 'product':
      return productHtml(b, ctx);
    case 'discount':
      return discountHtml(b, ctx);
    case 'social':
      return socialHtml(b, ctx);
    case 'list':
      return listHtml(b, ctx);
    case 'quote':
      return quoteHtml(b, ctx);
    case 'signature':
      return signatureHtml(b, ctx);
    case 'event':
      return eventHtml(b, ctx);
    case 'rating':
      return ratingHtml(b, ctx);
    case 'table':
      return tableHtml(b, ctx);
  }
}

const guarded = (b: Block, source: string) => {
  const when = conditionOf(b);
  return when === null || source === '' ? source : `{{#if ${when}}}${source}{{/if}}`;
};

export function designToSource(design: Design): { html: string; text: string } {
  const p = paletteOf(design);
  const firstHeading = design.blocks.findIndex((b) => b.type === 'heading');
  const rows = design.blocks.map((b, i) => guarded(b, blockHtml(b, { p, firstHeading: i === firstHeading }))).join('');
  const text = design.blocks
    .map((b) => {
      const t = blockText(b);
      return guarded(b, t === '' ? '' : `${t}\n\n`);
    })
    .join('');
  return { html: documentHtml(p, rows), text: text.replace(/\n+$/, '\n') };
}
