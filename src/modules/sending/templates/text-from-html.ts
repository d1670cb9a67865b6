import { compile } from 'html-to-text';
import { Parser } from 'htmlparser2';
import { tagSpans } from './language/index.js';

// The text part of a version that has only HTML (interface §4.3: "if only
// HTML is sent a plain-text version is generated"), made once at publish
// from the template's source, so that a send renders a text tree instead of
// converting HTML. html-to-text (maintained, used by Ghost and Strapi) does
// the conversion: links as `text [url]`, tables as aligned rows, lists.

const toText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true, noAnchorUrl: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((h) => ({ selector: h, options: { uppercase: false } })),
  ],
});

/**
 * How deep elements may nest in HTML that is converted to text. html-to-text
 * recurses once per level: 200,000 nested <div> kept a thread for 39 s and
 * then overflowed its stack. Email HTML nests tables a few dozen deep.
 */
export const MAX_HTML_DEPTH = 256;

/** The deepest nesting of elements in `html`, stopping as soon as it passes `limit`. */
export function htmlDepthOver(html: string, limit = MAX_HTML_DEPTH): boolean {
  let depth = 0;
  let over = false;
  const parser = new Parser(
    {
      onopentag: () => {
        if (++depth > limit && !over) {
          over = true;
          parser.pause();
        }
      },
      onclosetag: () => void depth--,
    },
    { decodeEntities: false },
  );
  parser.end(html);
  return over;
}

/** Rendered HTML → text, for the rare version whose text could not be made at publish; null if it cannot be converted. */
export function htmlToText(html: string): string | null {
  if (htmlDepthOver(html)) return null;
  try {
    return toText(html);
  } catch {
    return null;
  }
}

// A tag becomes a word of private-use characters that the conversion keeps as it is.
const token = (i: number) => `\uE000${i.toString(36)}\uE001`;
const TOKEN = /\uE000([0-9a-z]+)\uE001/g;
const TABLE_PARTS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr']);

/**
 * The text source of an HTML source: its tags are swapped for tokens, the
 * HTML converted, the tags put back. A tag that stands between table rows
 * (`<tr>` in `{{#each}}`) is given a cell of its own, or the conversion
 * would drop it. Null when the text would hold braces the HTML only showed.
 */
export function textSourceFromHtml(source: string): string | null {
  if (htmlDepthOver(source)) throw new Error(`elements nest more than ${MAX_HTML_DEPTH} deep`);
  const spans = tagSpans(source);
  // one token per distinct tag: `<a href="{{url}}">{{url}}</a>` keeps the link once, as html-to-text does for equal text and href
  const tags: string[] = [];
  const tokenOf = new Map<string, number>();
  let tokenized = '';
  let at = 0;
  for (const [start, end] of spans) {
    const tag = source.slice(start, end);
    let i = tokenOf.get(tag);
    if (i === undefined) tokenOf.set(tag, (i = tags.push(tag) - 1));
    tokenized += source.slice(at, start) + token(i);
    at = end;
  }
  tokenized += source.slice(at);
  const text = toText(cellsForTableTokens(tokenized));
  // `&#123;&#123;x}}` shows braces in the HTML; in a text source they would become a live tag
  if (text.includes('{{')) return null;
  return text.replace(TOKEN, (_, i: string) => tags[parseInt(i, 36)]);
}

function cellsForTableTokens(html: string): string {
  const open: string[] = [];
  const inserts: Array<{ at: number; end: number; wrap: 'td' | 'tr' }> = [];
  const parser = new Parser(
    {
      onopentag: (name) => open.push(name),
      onclosetag: (name) => {
        const i = open.lastIndexOf(name);
        if (i >= 0) open.length = i;
      },
      ontext: (text) => {
        const parent = open[open.length - 1];
        if (!parent || !TABLE_PARTS.has(parent) || !text.includes('\uE000')) return;
        inserts.push({ at: parser.startIndex, end: parser.endIndex + 1, wrap: parent === 'tr' ? 'td' : 'tr' });
      },
    },
    { decodeEntities: false },
  );
  parser.end(html);
  let out = '';
  let at = 0;
  for (const ins of inserts) {
    const tokens = html.slice(ins.at, ins.end).match(TOKEN) ?? [];
    const cells = tokens.map((t) => (ins.wrap === 'td' ? `<td>${t}</td>` : `<tr><td>${t}</td></tr>`)).join('');
    out += html.slice(at, ins.at) + cells;
    at = ins.end;
  }
  return out + html.slice(at);
}
