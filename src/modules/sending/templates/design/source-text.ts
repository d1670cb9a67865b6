// A design block's text is plain text that may hold template tags. In the
// generated HTML source the text around the tags is HTML-escaped here, once;
// the tags stay verbatim, and the values they insert are escaped by the
// renderer at send time. A quote inside a tag (`{{#if plan == 'pro'}}`) is
// part of the tag, never escaped.

import { escapeHtml } from '../../../../lib/html.js';
import { tagSpans, type UrlUse } from '../language/index.js';

export interface Piece {
  tag: boolean;
  text: string;
}

/** Literal text and `{{ … }}` tags, in order, cut where the language's lexer cuts them. */
export function splitTags(source: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  for (const [start, end] of tagSpans(source)) {
    if (start > at) pieces.push({ tag: false, text: source.slice(at, start) });
    pieces.push({ tag: true, text: source.slice(start, end) });
    at = end;
  }
  if (at < source.length) pieces.push({ tag: false, text: source.slice(at) });
  return pieces;
}

const mapText = (pieces: Piece[], f: (text: string) => string) =>
  pieces.map((p) => (p.tag ? p.text : f(p.text))).join('');

/** One line of text for HTML: escaped around the tags, newlines as `<br>`. */
export const htmlOf = (source: string) =>
  mapText(splitTags(source), (t) => escapeHtml(t.replace(/\r\n?/g, '\n')).replace(/\n/g, '<br>'));

/** An attribute value (href, src, alt): escaped around the tags, on one line. */
export const attrOf = (source: string) =>
  mapText(splitTags(source), (t) => escapeHtml(t.replace(/\s*[\r\n]+\s*/g, ' ')));

const BLANK_LINE = /[ \t]*\r?\n(?:[ \t]*\r?\n)+/;

/** Paragraphs separated by blank lines outside tags; a tag never splits. Each keeps its single newlines. */
export function paragraphsOf(source: string): string[] {
  const paragraphs: string[] = [''];
  for (const piece of splitTags(source.trim())) {
    if (piece.tag) {
      paragraphs[paragraphs.length - 1] += piece.text;
      continue;
    }
    const parts = piece.text.split(BLANK_LINE);
    paragraphs[paragraphs.length - 1] += parts[0];
    paragraphs.push(...parts.slice(1));
  }
  return paragraphs.map((p) => p.replace(/\r\n?/g, '\n').trim()).filter((p) => p !== '');
}

const isBlockTag = (tag: string) => /^\{\{\s*(?:[#/]|else(?:\s|\}\}))/.test(tag);

/**
 * The language drops a line that holds only a block tag (`{{#if x}}`,
 * `{{/if}}`) with its newline, so the text part shows no blank line for it;
 * the HTML, whose newlines become <br>, drops the same newline here.
 */
export function withoutStandaloneTags(paragraph: string): string {
  const dropped = new Array<boolean>(paragraph.length).fill(false);
  const drop = (from: number, to: number) => dropped.fill(true, Math.max(from, 0), to);
  for (const [start, end] of tagSpans(paragraph)) {
    if (!isBlockTag(paragraph.slice(start, end))) continue;
    const lineStart = paragraph.lastIndexOf('\n', start - 1) + 1;
    const nl = paragraph.indexOf('\n', end);
    const lineEnd = nl < 0 ? paragraph.length : nl;
    if (paragraph.slice(lineStart, start).trim() !== '' || paragraph.slice(end, lineEnd).trim() !== '') continue;
    // the line's own newline goes: the one after the tag, or before it on the last line
    drop(nl < 0 ? lineStart - 1 : lineStart, start);
    drop(end, nl < 0 ? lineEnd : nl + 1);
  }
  return paragraph
    .split('')
    .filter((_, i) => !dropped[i])
    .join('');
}

/** Text for the plain-text part: newlines normalised, one blank line between paragraphs. */
export const plainOf = (source: string) => paragraphsOf(source).join('\n\n');

/**
 * A URL field in the generated source. With placeholders it goes inside
 * `{{#url}}`, where the renderer percent-encodes them (all but one that
 * opens the field) and checks the URL it renders; without, it is as written,
 * checked at publish (checkDesign).
 */
export function urlSource(url: string, use: UrlUse): string {
  const u = url.trim();
  return u.includes('{{') ? `{{#url ${use}}}${u}{{/url}}` : u;
}

/** `url` with `name=value` added to its query, before any fragment outside the tags. */
export function withQuery(url: string, name: string, value: string): string {
  const pieces = splitTags(url);
  const literal = pieces.map((p) => (p.tag ? p.text.replace(/[?#]/g, '_') : p.text)).join('');
  const hash = literal.indexOf('#');
  const cut = hash < 0 ? url.length : hash;
  const sep = literal.slice(0, cut).includes('?') ? '&' : '?';
  return `${url.slice(0, cut)}${sep}${name}=${value}${url.slice(cut)}`;
}
