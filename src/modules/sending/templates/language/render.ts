import type { CompiledTemplate, Condition, Literal, Node, Path, PipeStep } from './ast.js';
import { applyFilter, localeOf } from './filters.js';
import { urlProblem } from './urls.js';
import { escapeHtml } from '../../../../lib/html.js';

// Rendering walks the tree a version stored (no parsing at send). Hot path:
// plain loops and string concatenation, no closures per node.

export interface RenderOptions {
  /** escape inserted values for HTML (the html part); subject and text insert them as they are */
  html: boolean;
  /** the send's language (interface §4.1): numbers, currencies and dates; English when null */
  language?: string | null;
  /**
   * Steps allowed before RenderNeedsRoom is thrown instead of rendering on:
   * the thread that answers HTTP renders what is small itself and hands the
   * rest to the parsing pool, where RENDER_BUDGET applies (docs/security.md).
   */
  light?: number;
}

/** The light allowance ran out: render again off this thread with the full budget. */
export class RenderNeedsRoom extends Error {
  constructor() {
    super('the rendering needs more steps than this thread gives it');
    this.name = 'RenderNeedsRoom';
  }
}

interface Loop {
  alias: string;
  item: unknown;
  index: number;
  length: number;
}

interface Scope {
  vars: Record<string, unknown>;
  loops: Loop[];
  html: boolean;
  locale: string;
  /** steps left (pieces, loop turns, condition terms, filters): loops over a send's lists could otherwise keep the thread for minutes */
  budget: number;
  /** characters left to write */
  room: number;
  /** the budget is a light allowance (RenderOptions.light) */
  light: boolean;
}

/** The steps (pieces, loop turns, condition terms, filters) one rendering may take: far above any email, far below a stalled thread. */
export const RENDER_BUDGET = 2_000_000;
/** interface §8: a part holds at most 1,000,000 characters, as a sent html or text does. */
export const MAX_RENDERED = 1_000_000;

/** A rendering stopped by RENDER_BUDGET or MAX_RENDERED: the variables make it too large. */
export class RenderTooLarge extends Error {
  constructor(what: string) {
    super(`the template renders ${what} with these variables`);
    this.name = 'RenderTooLarge';
  }
}

const tooLong = () => new RenderTooLarge(`more than ${MAX_RENDERED.toLocaleString('en')} characters`);
const tooMuch = (s: { light: boolean }) =>
  s.light ? new RenderNeedsRoom() : new RenderTooLarge(`more than ${RENDER_BUDGET.toLocaleString('en')} steps`);

export function renderTemplate(
  t: CompiledTemplate,
  variables: Record<string, unknown>,
  options: RenderOptions,
): string {
  const light = options.light !== undefined && options.light < RENDER_BUDGET;
  return renderNodes(t.nodes, {
    vars: variables,
    loops: [],
    html: options.html,
    locale: localeOf(options.language),
    budget: light ? options.light! : RENDER_BUDGET,
    light,
    room: MAX_RENDERED,
  });
}

function renderNodes(nodes: Node[], s: Scope): string {
  let out = '';
  if ((s.budget -= nodes.length + 1) < 0) throw tooMuch(s);
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (typeof n === 'string') {
      if ((s.room -= n.length) < 0) throw tooLong();
      out += n;
    } else if ('out' in n) {
      if ((s.budget -= n.pipe.length) < 0) throw tooMuch(s);
      let text = valueText(pipe(resolve(n.out, s), n.pipe, s.locale));
      if (s.html) text = escapeHtml(text);
      if ((s.room -= text.length) < 0) throw tooLong();
      out += text;
    } else if ('branches' in n) {
      let body = n.otherwise;
      for (let b = 0; b < n.branches.length; b++) {
        if (test(n.branches[b].when, s)) {
          body = n.branches[b].body;
          break;
        }
      }
      if (body) out += renderNodes(body, s);
    } else if ('url' in n) {
      const url = renderNodes(n.url, s);
      // `#`: the link stays and goes nowhere (an image shows nothing), the block keeps its shape
      out += urlProblem(url, n.use, n.whole ? 'variable' : 'written') === null ? url : '#';
    } else {
      const list = resolve(n.each, s);
      if (Array.isArray(list) && list.length > 0) {
        const loop: Loop = { alias: n.as, item: undefined, index: 0, length: list.length };
        s.loops.push(loop);
        for (let k = 0; k < list.length; k++) {
          loop.item = list[k];
          loop.index = k;
          out += renderNodes(n.body, s);
        }
        s.loops.pop();
      } else if (n.otherwise) out += renderNodes(n.otherwise, s);
    }
  }
  return out;
}

function resolve(p: Path, s: Scope): unknown {
  let v: unknown;
  const root = p.root;
  let found = false;
  for (let i = s.loops.length - 1; i >= 0; i--) {
    const loop = s.loops[i];
    if (root.charCodeAt(0) === 64 /* @ */) {
      v = root === '@index' ? loop.index : root === '@first' ? loop.index === 0 : loop.index === loop.length - 1;
      found = true;
      break;
    }
    if (loop.alias === root) {
      v = loop.item;
      found = true;
      break;
    }
  }
  // own properties only: a variable named "constructor" must not reach Object's
  if (!found) v = Object.hasOwn(s.vars, root) ? s.vars[root] : undefined;
  for (let i = 0; i < p.keys.length && v !== undefined; i++) {
    v =
      v !== null && typeof v === 'object' && Object.hasOwn(v, p.keys[i])
        ? (v as Record<string, unknown>)[p.keys[i]]
        : undefined;
  }
  return v;
}

const absent = (v: unknown) => v === undefined || v === null || v === '';

function pipe(value: unknown, steps: PipeStep[], locale: string): unknown {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if ('fallback' in step) {
      if (absent(value)) value = step.fallback;
    } else if (value !== undefined && value !== null) {
      value = applyFilter(step.filter, step.arg, value, valueText, locale);
    }
  }
  return value;
}

/** How a value is inserted: text as it is, numbers and booleans as JSON has them, lists joined with ", ". */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(valueText).join(', ');
  return JSON.stringify(v);
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return !(v === undefined || v === null || v === false || v === '' || v === 0 || Number.isNaN(v));
}

function numeric(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function compare(v: unknown, op: string, lit: Literal): boolean {
  if (op === '==' || op === '!=') {
    let eq: boolean;
    if (lit === null) eq = v === undefined || v === null;
    else if (typeof lit === 'number' && typeof v === 'number') eq = v === lit;
    else if (v === undefined || v === null) eq = false;
    else eq = valueText(v) === String(lit);
    return op === '==' ? eq : !eq;
  }
  if (v === undefined || v === null || lit === null) return false;
  const a = numeric(v);
  const b = numeric(lit);
  const c = a !== null && b !== null ? a - b : valueText(v) < String(lit) ? -1 : valueText(v) > String(lit) ? 1 : 0;
  return op === '>' ? c > 0 : op === '>=' ? c >= 0 : op === '<' ? c < 0 : c <= 0;
}

/** A compiled condition over plain values (a segment's filter over a contact), with the render's step budget. */
export function testCondition(c: Condition, vars: Record<string, unknown>): boolean {
  return test(c, { vars, loops: [], html: false, locale: 'en', budget: RENDER_BUDGET, light: false, room: Infinity });
}

export function test(c: Condition, s: Scope): boolean {
  if (--s.budget < 0) throw tooMuch(s);
  if ('truthy' in c) return truthy(resolve(c.truthy, s));
  if ('not' in c) return !truthy(resolve(c.not, s));
  if ('compare' in c) return compare(resolve(c.compare, s), c.op, c.value);
  if ('and' in c) return c.and.every((x) => test(x, s));
  return c.or.some((x) => test(x, s));
}
