import type { Block, BlockOf } from './design.schema.js';
import { cellSource, NETWORK_NAMES, ratingUrl, ROW_ALIAS } from './html-blocks-rich.js';
import { plainOf, urlSource } from './source-text.js';

// The plain-text part of a design: the same blocks as readable text, links
// as `label [url]`. Template tags stay verbatim; no HTML. Each block's text
// is returned without its trailing blank line (the caller adds it).

const RULE = '-'.repeat(40);
const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
/** A link's URL as the text part shows it: encoded and checked as in the HTML, so what a reader copies is what a click opens. */
const urlText = (url: string) => urlSource(oneLine(url), 'link');
const linked = (label: string, url: string) => (label ? `${oneLine(label)} [${urlText(url)}]` : `[${urlText(url)}]`);
const lines = (...xs: (string | false | undefined)[]) => xs.filter((x): x is string => !!x).join('\n');

function tableText(b: BlockOf<'table'>): string {
  const currency = b.currency ?? 'USD';
  const header = b.columns.map((c) => oneLine(c.header)).join(' | ');
  const cells = b.columns.map((c) => cellSource(c.field, c.format, currency)).join(' | ');
  return `${header}\n${'-'.repeat(Math.max(header.length, 3))}{{#each ${b.rows} as ${ROW_ALIAS}}}\n${cells}{{else}}{{/each}}`;
}

function ratingText(b: BlockOf<'rating'>): string {
  const scale = [1, 2, 3, 4, 5].map((n) => {
    const label =
      n === 1 && b.low_label
        ? ` (${oneLine(b.low_label)})`
        : n === 5 && b.high_label
          ? ` (${oneLine(b.high_label)})`
          : '';
    return `${n}${label} [${urlText(ratingUrl(b.url, n))}]`;
  });
  return lines(oneLine(b.question), ...scale);
}

function signatureText(b: BlockOf<'signature'>): string {
  const role = [b.title, b.company]
    .filter((s) => s)
    .map((s) => oneLine(s!))
    .join(', ');
  return lines(
    oneLine(b.name),
    role,
    b.email && oneLine(b.email),
    b.phone && oneLine(b.phone),
    b.website && urlText(b.website),
  );
}

const quoteText = (b: BlockOf<'quote'>) =>
  lines(
    ...plainOf(b.text)
      .split('\n')
      .map((l) => `> ${l}`.trimEnd()),
    b.author && `> -- ${oneLine(b.author)}`,
  );

const discountText = (b: BlockOf<'discount'>) =>
  `${oneLine(b.headline || 'Your discount')}\n\n    ${oneLine(b.code)}${b.details ? `\n\n${oneLine(b.details)}` : ''}`;

/** The text of one block, or '' for a block that has none (spacer, an image without alt or link). */
export function blockText(b: Block): string {
  switch (b.type) {
    case 'heading':
      return oneLine(b.text);
    case 'text':
    case 'footer':
      return plainOf(b.text);
    case 'button':
      return linked(b.label, b.url);
    case 'image':
    case 'logo':
      return b.link ? linked(b.alt ?? '', b.link) : oneLine(b.alt ?? '');
    case 'divider':
      return RULE;
    case 'spacer':
      return '';
    case 'columns':
      return lines(
        b.title && oneLine(b.title),
        b.text && plainOf(b.text),
        !!b.button_label && !!b.button_url && linked(b.button_label, b.button_url),
      );
    case 'product':
      return lines(
        oneLine(b.name),
        b.description && oneLine(b.description),
        b.price && oneLine(b.price),
        b.url && linked(b.button_label || 'View', b.url),
      );
    case 'discount':
      return discountText(b);
    case 'social':
      return lines(...b.links.map((l) => `${NETWORK_NAMES[l.network]}: ${urlText(l.url)}`));
    case 'list':
      return lines(...b.items.map((item, i) => `${b.ordered ? `${i + 1}.` : '-'} ${oneLine(item)}`));
    case 'quote':
      return quoteText(b);
    case 'signature':
      return signatureText(b);
    case 'event':
      return lines(
        oneLine(b.title),
        [b.date, b.time]
          .filter((s) => s)
          .map((s) => oneLine(s!))
          .join(', '),
        b.place && oneLine(b.place),
        b.url && linked(b.button_label || 'Add to calendar', b.url),
      );
    case 'rating':
      return ratingText(b);
    case 'table':
      return tableText(b);
  }
}
