import type { BlockOf, ColumnFormat, SocialNetwork } from './design.schema.js';
import {
  box,
  button,
  image,
  INNER,
  LAYOUT,
  link,
  mediaRow,
  PAD_X,
  paragraphs,
  row,
  typeStyle,
  type HtmlContext,
} from './html-parts.js';
import { attrOf, htmlOf, urlSource, withQuery } from './source-text.js';

// The composite blocks (cards, scales, the table) as rows of the card.

export const NETWORK_NAMES: Record<SocialNetwork, string> = {
  website: 'Website',
  x: 'X',
  facebook: 'Facebook',
  instagram: 'Instagram',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
  tiktok: 'TikTok',
  github: 'GitHub',
};

/** The alias a table block's loop gives each item of its array. */
export const ROW_ALIAS = 'row';

/** The placeholder of one table cell, formatted by the column's format. */
export function cellSource(field: string, format: ColumnFormat | undefined, currency: string): string {
  const value = `${ROW_ALIAS}.${field}`;
  switch (format ?? 'text') {
    case 'text':
      return `{{${value}}}`;
    case 'number':
      return `{{${value} | number}}`;
    case 'currency':
      return `{{${value} | currency:'${currency.toUpperCase()}'}}`;
    case 'date':
      return `{{${value} | date}}`;
  }
}

const RATINGS = [1, 2, 3, 4, 5];
export const ratingUrl = (url: string, n: number) => withQuery(url, 'rating', String(n));

const title = (ctx: HtmlContext, text: string, size = 18) =>
  `<p class="ph-text" style="margin:0 0 6px;${typeStyle(ctx.p, size, size + 8)}font-weight:bold;">${htmlOf(text)}</p>`;

export function columnsHtml(b: BlockOf<'columns'>, ctx: HtmlContext): string {
  const body = [
    b.title ? title(ctx, b.title) : '',
    b.text ? paragraphs(b.text, typeStyle(ctx.p, 15, 24), 'ph-text', 12) : '',
    b.button_label && b.button_url
      ? `<div style="padding-top:14px;">${button(ctx.p, b.button_label, b.button_url, 'left', 'small')}</div>`
      : '',
  ].join('');
  const img = image(b.image_url, b.image_alt ?? '', 240, { fluid: true });
  return row(mediaRow(img, body, 240, b.image_side ?? 'left'), { pad: `14px ${PAD_X}px` });
}

export function productHtml(b: BlockOf<'product'>, ctx: HtmlContext): string {
  const { p } = ctx;
  const body = [
    title(ctx, b.name, 17),
    b.description
      ? `<p class="ph-muted" style="margin:0 0 8px;${typeStyle(p, 14, 21, p.muted)}">${htmlOf(b.description)}</p>`
      : '',
    b.price
      ? `<p class="ph-text" style="margin:0;${typeStyle(p, 17, 24)}font-weight:bold;">${htmlOf(b.price)}</p>`
      : '',
    b.url ? `<div style="padding-top:14px;">${button(p, b.button_label || 'View', b.url, 'left', 'small')}</div>` : '',
  ].join('');
  const inner = INNER - 2 * 17;
  const content = b.image_url
    ? mediaRow(image(b.image_url, b.name, 160, { link: b.url || undefined }), body, 160, 'left', inner)
    : body;
  return row(box(p, content, 16), { pad: `10px ${PAD_X}px` });
}

export function discountHtml(b: BlockOf<'discount'>, { p }: HtmlContext): string {
  const headline = `<p class="ph-muted" style="margin:0 0 8px;${typeStyle(p, 13, 18, p.muted)}letter-spacing:1px;text-transform:uppercase;">${htmlOf(b.headline || 'Your discount')}</p>`;
  const code = `<p class="ph-link" style="margin:0;font-family:'Courier New', Courier, monospace;font-size:28px;line-height:36px;font-weight:bold;letter-spacing:3px;color:${p.accentText};">${htmlOf(b.code)}</p>`;
  const details = b.details
    ? `<p class="ph-muted" style="margin:8px 0 0;${typeStyle(p, 14, 20, p.muted)}">${htmlOf(b.details)}</p>`
    : '';
  const cell = `<td class="ph-tint" align="center" bgcolor="${p.tint}" style="padding:20px;background-color:${p.tint};border:2px dashed ${p.accent};border-radius:8px;text-align:center;">${headline}${code}${details}</td>`;
  return row(`<table ${LAYOUT} width="100%" style="width:100%;border-collapse:separate;"><tr>${cell}</tr></table>`, {
    pad: `14px ${PAD_X}px`,
  });
}

export function socialHtml(b: BlockOf<'social'>, { p }: HtmlContext): string {
  const pill = `display:inline-block;margin:4px;padding:6px 14px;border:1px solid ${p.accent};border-radius:16px;text-decoration:none;`;
  const links = b.links
    .map((l) =>
      link(p, l.url, NETWORK_NAMES[l.network], `${pill}font-family:${p.font};font-size:13px;line-height:18px;`),
    )
    .join(' ');
  return row(links, { align: b.align ?? 'center', pad: `12px ${PAD_X}px` });
}

export function signatureHtml(b: BlockOf<'signature'>, ctx: HtmlContext): string {
  const { p } = ctx;
  const role = [b.title, b.company]
    .filter((s) => s)
    .map((s) => htmlOf(s!))
    .join(', ');
  const contact = [
    b.email ? link(p, `mailto:${b.email}`, b.email) : '',
    b.phone ? htmlOf(b.phone) : '',
    b.website ? link(p, b.website, b.website) : '',
  ].filter((s) => s);
  const lines = [
    `<p class="ph-text" style="margin:0;${typeStyle(p, 16, 24)}font-weight:bold;">${htmlOf(b.name)}</p>`,
    role ? `<p class="ph-muted" style="margin:0;${typeStyle(p, 14, 21, p.muted)}">${role}</p>` : '',
    contact.length
      ? `<p class="ph-muted" style="margin:6px 0 0;${typeStyle(p, 14, 21, p.muted)}">${contact.join('<br>')}</p>`
      : '',
  ];
  return row(lines.join(''), { pad: `14px ${PAD_X}px` });
}

export function eventHtml(b: BlockOf<'event'>, ctx: HtmlContext): string {
  const { p } = ctx;
  const when = [b.date, b.time]
    .filter((s) => s)
    .map((s) => htmlOf(s!))
    .join(' &middot; ');
  const body = [
    title(ctx, b.title),
    `<p class="ph-link" style="margin:0;${typeStyle(p, 15, 22, p.accentText)}font-weight:bold;">${when}</p>`,
    b.place ? `<p class="ph-muted" style="margin:2px 0 0;${typeStyle(p, 15, 22, p.muted)}">${htmlOf(b.place)}</p>` : '',
    b.url
      ? `<div style="padding-top:16px;">${button(p, b.button_label || 'Add to calendar', b.url, 'left', 'small')}</div>`
      : '',
  ].join('');
  const card = `<table ${LAYOUT} width="100%" style="width:100%;"><tr><td style="padding:4px 0 4px 18px;border-left:4px solid ${p.accent};">${body}</td></tr></table>`;
  return row(card, { pad: `14px ${PAD_X}px` });
}

export function ratingHtml(b: BlockOf<'rating'>, ctx: HtmlContext): string {
  const { p } = ctx;
  const square = `display:block;width:44px;height:44px;${typeStyle(p, 18, 44, p.accentText)}font-weight:bold;text-align:center;text-decoration:none;border:1px solid ${p.accent};border-radius:6px;`;
  const cells = RATINGS.map(
    (n) =>
      `<td style="padding:0 5px;"><a href="${attrOf(urlSource(ratingUrl(b.url, n), 'link'))}" target="_blank" class="ph-link" style="${square}">${n}</a></td>`,
  ).join('');
  const label = (text: string | undefined, align: string) =>
    `<td colspan="2" class="ph-muted" align="${align}" style="padding:6px 5px 0;${typeStyle(p, 12, 16, p.muted)}text-align:${align};">${text ? htmlOf(text) : ''}</td>`;
  const labels =
    b.low_label || b.high_label ? `<tr>${label(b.low_label, 'left')}<td></td>${label(b.high_label, 'right')}</tr>` : '';
  const scale = `<table ${LAYOUT} style="margin:0 auto;"><tr>${cells}</tr>${labels}</table>`;
  const question = `<p class="ph-text" style="margin:0 0 14px;${typeStyle(p, 17, 24)}font-weight:bold;text-align:center;">${htmlOf(b.question)}</p>`;
  return row(question + scale, { align: 'center', pad: `16px ${PAD_X}px` });
}

export function tableHtml(b: BlockOf<'table'>, { p }: HtmlContext): string {
  const currency = b.currency ?? 'USD';
  const last = b.columns.length - 1;
  const cols = b.columns.map((c, j) => {
    const align = c.format === 'number' || c.format === 'currency' ? 'right' : 'left';
    // no outer padding, so the first and last columns line up with the text above
    return { c, align, side: `padding-left:${j === 0 ? 0 : 8}px;padding-right:${j === last ? 0 : 8}px;` };
  });
  const head = cols
    .map(
      ({ c, align, side }) =>
        `<th class="ph-muted" align="${align}" style="padding-top:8px;padding-bottom:8px;${side}${typeStyle(p, 12, 16, p.muted)}text-align:${align};font-weight:bold;text-transform:uppercase;letter-spacing:0.5px;border-bottom:2px solid ${p.accent};">${htmlOf(c.header)}</th>`,
    )
    .join('');
  const cells = cols
    .map(
      ({ c, align, side }) =>
        `<td class="ph-text ph-rule" align="${align}" style="padding-top:10px;padding-bottom:10px;${side}${typeStyle(p, 15, 22)}text-align:${align};border-bottom:1px solid ${p.border};">${cellSource(c.field, c.format, currency)}</td>`,
    )
    .join('');
  const body = `{{#each ${b.rows} as ${ROW_ALIAS}}}<tr>${cells}</tr>{{else}}{{/each}}`;
  return row(
    `<table cellpadding="0" cellspacing="0" border="0" width="100%" style="width:100%;border-collapse:collapse;"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
  );
}
