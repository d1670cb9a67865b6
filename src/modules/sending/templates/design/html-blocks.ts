import type { BlockOf } from './design.schema.js';
import { button, image, INNER, LAYOUT, PAD_X, paragraphs, row, typeStyle, type HtmlContext } from './html-parts.js';
import { htmlOf } from './source-text.js';

// The simple blocks as rows of the card. Each returns one <tr>.

export function headingHtml(b: BlockOf<'heading'>, { p, firstHeading }: HtmlContext): string {
  const [tag, size, lineHeight] = firstHeading ? ['h1', 26, 34] : ['h2', 20, 28];
  const align = b.align ?? 'left';
  const h = `<${tag} class="ph-text" style="margin:0;${typeStyle(p, size, lineHeight)}font-weight:bold;text-align:${align};">${htmlOf(b.text)}</${tag}>`;
  return row(h, { pad: `18px ${PAD_X}px 6px`, align });
}

export function textHtml(b: BlockOf<'text'>, { p }: HtmlContext): string {
  const align = b.align ?? 'left';
  return row(paragraphs(b.text, `${typeStyle(p, 16, 26)}text-align:${align};`, 'ph-text'), { align });
}

export function buttonHtml(b: BlockOf<'button'>, { p }: HtmlContext): string {
  const align = b.align ?? 'center';
  return row(button(p, b.label, b.url, align), { pad: `14px ${PAD_X}px`, align });
}

export function imageHtml(b: BlockOf<'image'>): string {
  return row(image(b.url, b.alt ?? '', INNER, { fluid: true, link: b.link || undefined }));
}

export function dividerHtml(_b: BlockOf<'divider'>, { p }: HtmlContext): string {
  const line = `<table ${LAYOUT} width="100%" style="width:100%;"><tr><td class="ph-rule" height="1" style="height:1px;border-top:1px solid ${p.border};font-size:1px;line-height:1px;mso-line-height-rule:exactly;">&nbsp;</td></tr></table>`;
  return row(line, { pad: `14px ${PAD_X}px` });
}

export function spacerHtml(b: BlockOf<'spacer'>): string {
  const h = b.height ?? 24;
  return `<tr><td height="${h}" style="height:${h}px;font-size:1px;line-height:${h}px;mso-line-height-rule:exactly;">&nbsp;</td></tr>\n`;
}

export function footerHtml(b: BlockOf<'footer'>, { p }: HtmlContext): string {
  return row(paragraphs(b.text, `${typeStyle(p, 13, 20, p.muted)}text-align:center;`, 'ph-muted', 8), {
    pad: `18px ${PAD_X}px 8px`,
    align: 'center',
  });
}

export function logoHtml(b: BlockOf<'logo'>): string {
  const align = b.align ?? 'left';
  return row(image(b.url, b.alt ?? '', b.width ?? 140, { link: b.link || undefined, align }), {
    pad: `20px ${PAD_X}px 8px`,
    align,
  });
}

export function listHtml(b: BlockOf<'list'>, { p }: HtmlContext): string {
  const tag = b.ordered ? 'ol' : 'ul';
  const items = b.items
    .map((item) => `<li class="ph-text" style="margin:0 0 6px;${typeStyle(p, 16, 24)}">${htmlOf(item)}</li>`)
    .join('');
  return row(`<${tag} style="margin:0;padding:0 0 0 24px;${typeStyle(p, 16, 24)}">${items}</${tag}>`);
}

export function quoteHtml(b: BlockOf<'quote'>, { p }: HtmlContext): string {
  const text = paragraphs(b.text, `${typeStyle(p, 18, 28)}font-style:italic;`, 'ph-text', 12);
  const author = b.author
    ? `<p class="ph-muted" style="margin:10px 0 0;${typeStyle(p, 14, 20, p.muted)}">&mdash; ${htmlOf(b.author)}</p>`
    : '';
  const bar = `<td style="padding:4px 0 4px 18px;border-left:4px solid ${p.accent};">${text}${author}</td>`;
  return row(`<table ${LAYOUT} width="100%" style="width:100%;"><tr>${bar}</tr></table>`, { pad: `14px ${PAD_X}px` });
}
