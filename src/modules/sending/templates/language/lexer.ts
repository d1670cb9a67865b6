import type { Where } from './errors.js';

/** A piece of source: literal text, or a `{{ … }}` tag with its inside and where both start. */
export type Token =
  { kind: 'text'; text: string } | { kind: 'tag'; inner: string; start: number; innerStart: number; block: boolean };

/**
 * Splits a source into text and tags. A tag ends at the first `}}`. Block
 * tags (`#…`, `/…`, `else…`) that stand alone on their line take the line
 * with them.
 */
export function lex(source: string, where: Where): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open < 0) {
      tokens.push({ kind: 'text', text: source.slice(i) });
      break;
    }
    if (open > i) tokens.push({ kind: 'text', text: source.slice(i, open) });
    if (source.charCodeAt(open + 2) === 123 /* { */) {
      throw where.error(
        open,
        '{{{ … }}} is not supported: values are always escaped in html, and inserted as they are in subject and text',
      );
    }
    const close = closingBraces(source, open + 2);
    if (close < 0) throw where.error(open, '{{ is never closed with }}');
    const inner = source.slice(open + 2, close);
    const head = inner.trimStart();
    const block = head.startsWith('#') || head.startsWith('/') || /^else(\s|$)/.test(head);
    tokens.push({ kind: 'tag', inner, start: open, innerStart: open + 2, block });
    i = close + 2;
  }
  return stripStandalone(tokens);
}

/** Where each tag of a source that compiled is: [start of `{{`, end after `}}`). */
export function tagSpans(source: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let i = source.indexOf('{{');
  while (i >= 0) {
    const close = closingBraces(source, i + 2);
    if (close < 0) break;
    spans.push([i, close + 2]);
    i = source.indexOf('{{', close + 2);
  }
  return spans;
}

// A tag ends at the first `}}`: a quoted text in a tag cannot hold `}}`. (Letting quotes
// decide would let an apostrophe in a bare fallback, `{{ name | it's me }}`, run the tag
// on into the rest of the document.)
function closingBraces(source: string, from: number): number {
  return source.indexOf('}}', from);
}

const BLANK = /^[ \t]*$/;

/**
 * Handlebars' standalone rule: a line that holds one block tag and only
 * spaces renders as nothing, newline included, so that a text template
 * written one tag per line does not fill with blank lines.
 */
function stripStandalone(tokens: Token[]): Token[] {
  const original = tokens.map((t) => (t.kind === 'text' ? t.text : null));
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'tag' || !t.block) continue;
    const before = i === 0 ? '' : original[i - 1];
    const after = i === tokens.length - 1 ? '' : original[i + 1];
    if (before === null || after === null || before === undefined || after === undefined) continue;
    const nl = before.lastIndexOf('\n');
    const lineHead = nl < 0 ? before : before.slice(nl + 1);
    if (!BLANK.test(lineHead) || (nl < 0 && i > 1)) continue;
    const nlAfter = after.indexOf('\n');
    const lineTail = nlAfter < 0 ? after : after.slice(0, nlAfter);
    if (!BLANK.test(lineTail.replace(/\r$/, '')) || (nlAfter < 0 && i + 1 < tokens.length - 1)) continue;
    if (i > 0) {
      const prev = tokens[i - 1] as { kind: 'text'; text: string };
      prev.text = prev.text.slice(0, prev.text.length - lineHead.length);
    }
    if (i < tokens.length - 1) {
      const next = tokens[i + 1] as { kind: 'text'; text: string };
      next.text = nlAfter < 0 ? '' : next.text.slice(nlAfter + 1);
    }
  }
  return tokens.filter((t) => t.kind === 'tag' || t.text !== '');
}
