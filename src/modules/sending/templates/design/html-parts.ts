import type { Palette } from './palette.js';
import { attrOf, htmlOf, paragraphsOf, urlSource, withoutStandaloneTags } from './source-text.js';

// Pieces of email-client-safe HTML shared by the blocks: layout tables with
// role="presentation", inline styles (many clients drop <style>), sizes as
// attributes too (Outlook for Windows reads width="", not CSS).

export type Align = 'left' | 'center' | 'right';

/** Content width inside the 600 px card, 32 px padding each side. */
export const INNER = 536;
export const PAD_X = 32;

export interface HtmlContext {
  p: Palette;
  /** the first heading is the h1, later ones are h2 */
  firstHeading: boolean;
}

export const LAYOUT = 'role="presentation" cellpadding="0" cellspacing="0" border="0"';

export const typeStyle = (p: Palette, size: number, lineHeight: number, color = p.text) =>
  `font-family:${p.font};font-size:${size}px;line-height:${lineHeight}px;color:${color};mso-line-height-rule:exactly;`;

/** One block: a row of the card. */
export function row(inner: string, options: { pad?: string; align?: Align; cls?: string } = {}): string {
  const align = options.align ?? 'left';
  const pad = options.pad ?? `10px ${PAD_X}px`;
  return `<tr><td class="ph-pad${options.cls ? ` ${options.cls}` : ''}" align="${align}" style="padding:${pad};text-align:${align};">${inner}</td></tr>\n`;
}

/** Paragraphs of a text field; blank lines separate them, single newlines are <br>. */
export function paragraphs(source: string, style: string, cls: string, gap = 16): string {
  const ps = paragraphsOf(source);
  return ps
    .map(
      (text, i) =>
        `<p class="${cls}" style="margin:0 0 ${i === ps.length - 1 ? 0 : gap}px;${style}">${htmlOf(withoutStandaloneTags(text))}</p>`,
    )
    .join('');
}

/** A bulletproof button: the padded cell carries the colour, so it shows even where the link's padding is dropped. */
export function button(
  p: Palette,
  label: string,
  url: string,
  align: Align,
  size: 'large' | 'small' = 'large',
): string {
  const [fontSize, padding] = size === 'large' ? [16, '13px 28px'] : [14, '10px 20px'];
  const table = `<table ${LAYOUT} style="margin:${align === 'center' ? '0 auto' : align === 'right' ? '0 0 0 auto' : '0'};border-collapse:separate;">`;
  const cell = `<td align="center" bgcolor="${p.accent}" style="background-color:${p.accent};border-radius:6px;mso-padding-alt:${padding};">`;
  const link =
    `<a href="${attrOf(urlSource(url, 'link'))}" target="_blank" style="display:inline-block;padding:${padding};${typeStyle(p, fontSize, 20, p.onAccent)}` +
    `font-weight:bold;text-decoration:none;border-radius:6px;">${htmlOf(label)}</a>`;
  return `${table}<tr>${cell}${link}</td></tr></table>`;
}

/** An image scaled to `width` (and narrower on a phone); its height follows its own aspect ratio. */
export function image(
  url: string,
  alt: string,
  width: number,
  options: { fluid?: boolean; link?: string; align?: Align } = {},
): string {
  // a block image ignores text-align: its margins place it
  const margin = options.align === 'center' ? 'margin:0 auto;' : options.align === 'right' ? 'margin:0 0 0 auto;' : '';
  const style = `display:block;${margin}width:${options.fluid ? '100%' : `${width}px`};max-width:${options.fluid ? `${width}px` : '100%'};height:auto;border:0;outline:none;text-decoration:none;`;
  const img = `<img src="${attrOf(urlSource(url, 'image'))}" alt="${attrOf(alt)}" width="${width}" border="0"${options.fluid ? ' class="ph-fluid"' : ''} style="${style}">`;
  return options.link
    ? `<a href="${attrOf(urlSource(options.link, 'link'))}" target="_blank" style="text-decoration:none;">${img}</a>`
    : img;
}

export const link = (p: Palette, url: string, label: string, extra = '') =>
  `<a href="${attrOf(urlSource(url, 'link'))}" target="_blank" class="ph-link" style="color:${p.accentText};text-decoration:underline;${extra}">${htmlOf(label)}</a>`;

/** Image and body side by side; on a phone they stack with the image first (dir="rtl" puts it on the right meanwhile). */
export function mediaRow(
  imageHtml: string,
  body: string,
  imageWidth: number,
  side: 'left' | 'right',
  width = INNER,
): string {
  const gap = 24;
  const bodyWidth = width - imageWidth - gap;
  const imageCell = `<td class="ph-col" width="${imageWidth}" valign="top" dir="ltr" style="width:${imageWidth}px;vertical-align:top;">${imageHtml}</td>`;
  const pad = side === 'left' ? `0 0 0 ${gap}px` : `0 ${gap}px 0 0`;
  const bodyCell = `<td class="ph-col ph-col-text" width="${bodyWidth}" valign="top" dir="ltr" style="width:${bodyWidth}px;vertical-align:top;padding:${pad};">${body}</td>`;
  return `<table ${LAYOUT} width="100%" dir="${side === 'right' ? 'rtl' : 'ltr'}" style="width:100%;"><tr>${imageCell}${bodyCell}</tr></table>`;
}

/** A box with a border, for cards inside the card (product, event). */
export const box = (p: Palette, inner: string, pad = 20) =>
  `<table ${LAYOUT} width="100%" style="width:100%;border-collapse:separate;"><tr><td class="ph-box" style="padding:${pad}px;border:1px solid ${p.border};border-radius:8px;">${inner}</td></tr></table>`;
