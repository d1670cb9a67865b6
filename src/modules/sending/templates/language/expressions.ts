import {
  FILTER_NAMES,
  type CompareOp,
  type Condition,
  type FilterName,
  type Literal,
  type Path,
  type PipeStep,
} from './ast.js';
import type { Where } from './errors.js';
import { checkFilterArg } from './filters.js';

// The insides of tags: paths, pipes and conditions. Every function takes the
// text and the offset where it starts in the source, so that a mistake is
// reported where it is.

const PATH = /^(@?[A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)$/;

/** Checks a path's root as it is parsed: declared, a loop alias in scope, or an @-variable inside a loop. */
export type RootCheck = (root: string, offset: number) => void;

export function parsePath(text: string, offset: number, where: Where, checkRoot: RootCheck): Path {
  const m = PATH.exec(text);
  if (!m) {
    if (text === '') throw where.error(offset, 'a variable name is expected here');
    throw where.error(offset, `'${text}' is not a variable path (names like user.first_name, items.0.price)`);
  }
  checkRoot(m[1], offset);
  return { root: m[1], keys: m[2] ? m[2].slice(1).split('.') : [] };
}

/** A quote starts a quoted text at the start of a segment or after a filter's `:`; elsewhere (`it's`) it is a letter. */
function opensQuote(before: string): boolean {
  const t = before.trimEnd();
  return t.trim() === '' || t.endsWith(':');
}

/** Splits at `|` outside quotes: [text, offset of its first non-blank character][]. */
function segments(inner: string, offset: number): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  let quote = '';
  let start = 0;
  for (let i = 0; i <= inner.length; i++) {
    const c = inner[i];
    if (quote && i < inner.length) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if ((c === "'" || c === '"') && opensQuote(inner.slice(start, i))) quote = c;
    else if (c === '|' || i === inner.length) {
      const raw = inner.slice(start, i);
      const lead = raw.length - raw.trimStart().length;
      out.push([raw.trim(), offset + start + lead]);
      start = i + 1;
    }
  }
  return out;
}

/** `path | filter:arg | fallback`: CONTRACT §6's pipe, left to right. */
export function parseOutput(
  inner: string,
  offset: number,
  where: Where,
  checkRoot: RootCheck,
): { out: Path; pipe: PipeStep[] } {
  const [head, ...rest] = segments(inner, offset);
  const out = parsePath(head[0], head[1], where, checkRoot);
  const pipe = rest.map(([text, at]) => parseStep(text, at, where));
  return { out, pipe };
}

function parseStep(text: string, at: number, where: Where): PipeStep {
  if (text === '') throw where.error(at, 'nothing after | (a filter such as upper, or a fallback text)');
  if (isQuoted(text)) return { fallback: unquote(text, at, where) };
  if (text[0] === "'" || text[0] === '"')
    throw where.error(at, `the quoted text starting here is never closed with ${text[0]}`);
  const colon = text.indexOf(':');
  const name = (colon < 0 ? text : text.slice(0, colon)).trim();
  if (!(FILTER_NAMES as readonly string[]).includes(name)) return { fallback: text };
  let arg: string | number | null = null;
  if (colon >= 0) {
    const rawArg = text.slice(colon + 1).trim();
    if (rawArg === '') throw where.error(at, `${name}: an argument is expected after ':'`);
    arg = isQuoted(rawArg) ? unquote(rawArg, at, where) : /^-?\d+(\.\d+)?$/.test(rawArg) ? Number(rawArg) : rawArg;
  }
  const problem = checkFilterArg(name as FilterName, arg);
  if (typeof problem === 'string') throw where.error(at, problem);
  return { filter: name as FilterName, arg: problem.arg };
}

const isQuoted = (s: string) => s.length >= 2 && (s[0] === "'" || s[0] === '"') && s[s.length - 1] === s[0];

function unquote(s: string, at: number, where: Where): string {
  const q = s[0];
  let out = '';
  for (let i = 1; i < s.length - 1; i++) {
    if (s[i] === '\\' && i + 1 < s.length - 1) out += s[++i];
    else if (s[i] === q) throw where.error(at + i, `a quoted text ends here; escape a ${q} inside it as \\${q}`);
    else out += s[i];
  }
  return out;
}

type CondToken = { t: 'word' | 'string' | 'op' | 'not'; v: string; at: number };

const COND_TOKEN = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(==|!=|>=|<=|>|<|=)|(!)|(-?[@A-Za-z0-9_.]+)|(\S))/y;

function tokenize(text: string, offset: number, where: Where): CondToken[] {
  const out: CondToken[] = [];
  COND_TOKEN.lastIndex = 0;
  while (COND_TOKEN.lastIndex < text.length) {
    const from = COND_TOKEN.lastIndex;
    const m = COND_TOKEN.exec(text);
    if (!m) break; // only blanks were left
    const at = offset + from + (m[0].length - m[0].trimStart().length);
    if (m[1]) out.push({ t: 'string', v: unquote(m[1], at, where), at });
    else if (m[2]) out.push({ t: 'op', v: m[2], at });
    else if (m[3]) out.push({ t: 'not', v: '!', at });
    else if (m[4]) out.push({ t: 'word', v: m[4], at });
    else if (m[5] === "'" || m[5] === '"')
      throw where.error(at, `the quoted text starting here is never closed with ${m[5]}`);
    else throw where.error(at, `unexpected '${m[5]}' in a condition`);
  }
  return out;
}

/** `a`, `!a`, `a OP literal`, joined by `and` (tighter) and `or` (CONTRACT §6). */
export function parseCondition(text: string, offset: number, where: Where, checkRoot: RootCheck): Condition {
  const tokens = tokenize(text, offset, where);
  const end = offset + text.length;
  if (tokens.length === 0) throw where.error(offset, "a condition is expected (e.g. plan == 'pro')");
  let i = 0;
  const peekWord = (w: string) => tokens[i]?.t === 'word' && tokens[i].v === w;
  const term = (): Condition => {
    const tok = tokens[i];
    if (!tok) throw where.error(tokens[i - 1].at, `a condition is expected after '${tokens[i - 1].v}'`);
    if (tok.t === 'not') {
      const next = tokens[++i];
      if (!next || next.t !== 'word') throw where.error(next?.at ?? end, "a variable is expected after '!'");
      i++;
      return { not: parsePath(next.v, next.at, where, checkRoot) };
    }
    if (tok.t !== 'word' || tok.v === 'and' || tok.v === 'or')
      throw where.error(tok.at, `a variable is expected here, not '${tok.v}'`);
    const path = parsePath(tok.v, tok.at, where, checkRoot);
    i++;
    const op = tokens[i];
    if (!op || op.t !== 'op') return { truthy: path };
    if (op.v === '=') throw where.error(op.at, "use == to compare ('=' alone is not an operator)");
    const lit = tokens[++i];
    if (!lit) throw where.error(end, `a value is expected after '${op.v}'`);
    i++;
    return { compare: path, op: op.v as CompareOp, value: literal(lit, where) };
  };
  const all = (): Condition => {
    const ors: Condition[] = [];
    do {
      const ands: Condition[] = [term()];
      while (peekWord('and') && ++i) ands.push(term());
      ors.push(ands.length === 1 ? ands[0] : { and: ands });
    } while (peekWord('or') && ++i);
    return ors.length === 1 ? ors[0] : { or: ors };
  };
  const cond = all();
  if (i < tokens.length) throw where.error(tokens[i].at, `unexpected '${tokens[i].v}': join conditions with and / or`);
  return cond;
}

function literal(tok: CondToken, where: Where): Literal {
  if (tok.t === 'string') return tok.v;
  if (tok.t === 'word') {
    if (tok.v === 'true') return true;
    if (tok.v === 'false') return false;
    if (tok.v === 'null') return null;
    if (/^-?\d+(\.\d+)?$/.test(tok.v)) return Number(tok.v);
  }
  throw where.error(
    tok.at,
    `compare with a quoted text, a number, true, false or null, not '${tok.v}'${tok.t === 'word' ? ` (write '${tok.v}' in quotes)` : ''}`,
  );
}
