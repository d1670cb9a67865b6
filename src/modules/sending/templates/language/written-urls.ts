import type { Declared, Node, UrlUse } from './ast.js';
import { Where } from './errors.js';
import { lex } from './lexer.js';
import { compileTemplate } from './parser.js';
import { renderTemplate } from './render.js';
import { compactUrl, startIsOpen, urlProblem } from './urls.js';

// A URL field of a design as its author wrote it, checked at publish. What
// it renders with its variables absent depends on the {{#if}} branch taken,
// on how often an {{#each}} turns and on the fallbacks that show: none of
// those texts may open with a refused scheme (urlProblem's `written`), and
// no fallback may be a refused URL on its own. What variables give is
// checked when the field renders (render.ts), where a refused URL is `#`.
//
// Only the start of a URL decides, so the texts are followed as their
// starts (compactUrl), and a start is settled as soon as nothing after it
// can change the answer (startIsOpen): a field of n {{#if}}s is walked in a
// few dozen starts, never in 2^n texts.

/** What the field may render: a literal or a fallback (`at`: its offset in the field), or a choice of pieces. */
type Part = { text: string; at: number } | { ways: Part[][] } | { turns: Part[]; otherwise: Part[] };

/** Starts still open → the offset of the character that begins each. */
type Starts = Map<string, number>;

const VISIBLE = /[^\s\p{Cc}\p{Cf}]/u;

/** Throws the TemplateError of a refused start of `source`, a URL field that compiles, or of a fallback in it. */
export function checkWrittenUrl(source: string, field: string, declared: Declared, use: UrlUse): void {
  const where = new Where(source, field);
  const refuse = (start: string, at: number) => {
    const problem = urlProblem(start, use, 'written');
    if (problem !== null) throw where.error(at, problem);
  };
  const fallbackProblem = (text: string, at: number) => {
    const problem = urlProblem(text, use, 'written');
    if (problem !== null) throw where.error(at, `${problem} (this placeholder's fallback)`);
  };
  const parts = partsOf(source, compileTemplate(source, field, declared).nodes, where, fallbackProblem);
  for (const [start, at] of follow(parts, new Map([['', 0]]), refuse)) refuse(start, at);
}

/**
 * The compiled field as Parts. The parser makes one node of each text and
 * each placeholder, in the order of the source, and the standalone rule
 * takes only blanks from a text: the n-th text with a visible character is
 * the n-th such run between the tags.
 */
function partsOf(
  source: string,
  nodes: Node[],
  where: Where,
  fallbackProblem: (text: string, at: number) => void,
): Part[] {
  const literals: number[] = [];
  const placeholders: number[] = [];
  let from = 0;
  for (const t of lex(source, where)) {
    if (t.kind === 'text') continue;
    const visible = source.slice(from, t.start).search(VISIBLE);
    if (visible >= 0) literals.push(from + visible);
    if (!t.block) placeholders.push(t.start);
    from = t.innerStart + t.inner.length + 2;
  }
  const rest = source.slice(from).search(VISIBLE);
  if (rest >= 0) literals.push(from + rest);

  const build = (list: Node[] | null): Part[] =>
    (list ?? []).flatMap((n): Part[] => {
      if (typeof n === 'string') return VISIBLE.test(n) ? [{ text: n, at: literals.shift()! }] : [];
      if ('out' in n) {
        const at = placeholders.shift()!;
        if (!n.pipe.some((s) => 'fallback' in s)) return [];
        // what the placeholder shows when its variable is absent: the fallback through the filters after it
        const text = renderTemplate({ nodes: [n] }, {}, { html: false });
        fallbackProblem(text, at);
        return [{ text, at }];
      }
      if ('branches' in n) return [{ ways: [...n.branches.map((b) => build(b.body)), build(n.otherwise)] }];
      if ('each' in n) return [{ turns: build(n.body), otherwise: build(n.otherwise) }];
      return build(n.url);
    });
  return build(nodes);
}

function follow(parts: Part[], starts: Starts, refuse: (start: string, at: number) => void): Starts {
  for (const part of parts) {
    if ('text' in part) starts = extend(starts, part, refuse);
    else if ('ways' in part) starts = merge(part.ways.map((w) => follow(w, starts, refuse)));
    else starts = merge([follow(part.otherwise, starts, refuse), turned(part.turns, starts, refuse)]);
  }
  return starts;
}

/** The starts after one turn of a loop's body or more: turned again until no new start comes (there are few open ones). */
function turned(body: Part[], starts: Starts, refuse: (start: string, at: number) => void): Starts {
  const after: Starts = new Map();
  let fresh = starts;
  while (fresh.size > 0) {
    fresh = new Map([...follow(body, fresh, refuse)].filter(([s]) => !after.has(s)));
    for (const [s, at] of fresh) after.set(s, at);
  }
  return after;
}

/** Each start with the text added: a settled one is refused or dropped; the open ones go on. */
function extend(
  starts: Starts,
  part: { text: string; at: number },
  refuse: (start: string, at: number) => void,
): Starts {
  const piece = compactUrl(part.text);
  const out: Starts = new Map();
  for (const [start, at] of starts) {
    const next = start + piece;
    const from = start === '' ? part.at : at;
    if (!startIsOpen(next)) refuse(next, from);
    else if (!out.has(next)) out.set(next, from);
  }
  return out;
}

function merge(all: Starts[]): Starts {
  const out: Starts = new Map();
  for (const starts of all) for (const [s, at] of starts) if (!out.has(s)) out.set(s, at);
  return out;
}
