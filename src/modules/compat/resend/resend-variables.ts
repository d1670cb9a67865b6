import { ApiError } from '../../../lib/errors.js';
import { Where } from '../../sending/templates/language/index.js';

// Resend's variables in our template language (docs/templates.md), for the broadcasts and templates
// of /resend. Pure.
//
//   Resend                          ours
//   {{{NAME}}}                      {{ NAME }}
//   {{{NAME|fallback}}}             {{ NAME | 'fallback' }}     (used when the value is missing, null or "")
//   {{{ NAME | two words }}}        {{ NAME | 'two words' }}    (name and fallback trimmed)
//   {{{NAME|it's "x"}}}             {{ NAME | 'it\'s "x"' }}
//
// Which names exist is the caller's (`Resolve`): a broadcast's contact fields and unsubscribe link
// (broadcastVariable), a template's declared variables. Anything else of Resend's between `{{{`
// and `}}}` is refused with 422 naming the field, line and column: our language has no way to
// write it as literal text (`{{` always opens a placeholder there). A `{{ … }}` with two braces is
// already our language and is left as it is, so what a get answers (ours) can be sent back.
//
// Resend does not escape `{{{…}}}` (Mustache's triple braces); ours has no unescaped form: a value
// and a fallback are escaped for HTML in `html`, and inserted as they are in the subject and text.

/** One `{{{…}}}` of Resend's: its name and its fallback as written (null: none). */
export interface ResendVariable {
  name: string;
  fallback: string | null;
}

/** What a Resend variable becomes: a path of ours with its fallback, or why it is refused. */
export type Resolved = { path: string; fallback: string | null } | { refused: string };

export type Resolve = (v: ResendVariable) => Resolved;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*$/;

/** `source` (the field `field` of a request) with every `{{{…}}}` of Resend's written in our language. */
export function translateResend(source: string, field: string, resolve: Resolve): string {
  const where = new Where(source, field);
  let out = '';
  let i = 0;
  for (;;) {
    const open = source.indexOf('{{', i);
    if (open < 0) return out + source.slice(i);
    out += source.slice(i, open);
    if (source[open + 2] !== '{') {
      // ours, to its end as our lexer reads it: a tag ends at its first `}}`
      const close = source.indexOf('}}', open + 2);
      i = close < 0 ? source.length : close + 2;
      out += source.slice(open, i);
      continue;
    }
    const close = source.indexOf('}}}', open + 3);
    if (close < 0) throw refusal(where, open, '{{{ is never closed with }}}');
    const resolved = resolve(parseVariable(source.slice(open + 3, close), where, open));
    if ('refused' in resolved) throw refusal(where, open, resolved.refused);
    out += ourTag(resolved.path, resolved.fallback);
    i = close + 3;
  }
}

function parseVariable(inner: string, where: Where, at: number): ResendVariable {
  const bar = inner.indexOf('|');
  const name = (bar < 0 ? inner : inner.slice(0, bar)).trim();
  if (!NAME.test(name))
    throw refusal(
      where,
      at,
      `{{{${shorten(inner)}}}} is not a Resend variable: write {{{NAME}}} or {{{NAME|fallback}}} (a name of letters, digits and _)`,
    );
  const fallback = bar < 0 ? null : inner.slice(bar + 1).trim();
  if (fallback?.includes('}}')) throw refusal(where, at, 'a fallback cannot hold }} here');
  return { name, fallback };
}

/** Our placeholder: the fallback as a quoted text, so that no word of it is read as a filter. */
export function ourTag(path: string, fallback: string | null): string {
  if (fallback === null) return `{{ ${path} }}`;
  return `{{ ${path} | '${fallback.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}' }}`;
}

const shorten = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);

function refusal(where: Where, at: number, reason: string): ApiError {
  const e = where.error(at, reason);
  return new ApiError(400, 'validation_error', e.message, e.field);
}

/** Resend's contact variables of a broadcast, and ours (broadcast-content.ts BROADCAST_VARIABLES). */
const CONTACT_VARIABLES: Record<string, string> = {
  FIRST_NAME: 'contact.first_name',
  LAST_NAME: 'contact.last_name',
  EMAIL: 'contact.email',
  RESEND_UNSUBSCRIBE_URL: 'unsubscribe_url',
  UNSUBSCRIBE_URL: 'unsubscribe_url',
};

/**
 * A broadcast's variables: the contact's fields by Resend's older names (FIRST_NAME…), or as
 * `contact.<field or property>` (`contact.first_name`, `contact.company`), and the unsubscribe link.
 */
export const broadcastVariable: Resolve = ({ name, fallback }) => {
  const path = Object.hasOwn(CONTACT_VARIABLES, name)
    ? CONTACT_VARIABLES[name]
    : /^contact\.[A-Za-z0-9_]+$/.test(name)
      ? name
      : null;
  if (path === null)
    return {
      refused: `{{{${name}}}} is not available in a broadcast: there are {{{FIRST_NAME}}}, {{{LAST_NAME}}}, {{{EMAIL}}}, {{{contact.<property>}}} and {{{RESEND_UNSUBSCRIBE_URL}}}`,
    };
  return { path, fallback };
};

// the placeholders translateResend writes for a broadcast, whole tags only
const OUR_BROADCAST_TAG = /^\{\{ (contact\.[A-Za-z0-9_]+|unsubscribe_url)(?: \| '((?:[^'\\]|\\.)*)')? \}\}$/;

/**
 * A broadcast's stored content as Resend writes it, for its get: the placeholders translateResend
 * wrote become Resend's again (`{{{contact.first_name|there}}}`, `{{{RESEND_UNSUBSCRIBE_URL}}}`);
 * any other tag of ours stays as it is, and reads back the same through translateResend.
 */
export function broadcastInResendSyntax(source: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const open = source.indexOf('{{', i);
    if (open < 0) return out + source.slice(i);
    const close = source.indexOf('}}', open + 2);
    if (close < 0) return out + source.slice(i);
    const tag = source.slice(open, close + 2);
    out += source.slice(i, open) + (resendTag(tag) ?? tag);
    i = close + 2;
  }
}

/** One of our broadcast tags as Resend's, when Resend's syntax can say the same (null: it cannot). */
function resendTag(tag: string): string | null {
  const m = OUR_BROADCAST_TAG.exec(tag);
  if (!m) return null;
  const name = m[1] === 'unsubscribe_url' ? 'RESEND_UNSUBSCRIBE_URL' : m[1];
  if (m[2] === undefined) return `{{{${name}}}}`;
  const fallback = m[2].replace(/\\(.)/g, '$1');
  // read back, a fallback is trimmed and ends at the first }}}
  if (fallback !== fallback.trim() || fallback.endsWith('}')) return null;
  return `{{{${name}|${fallback}}}}`;
}
