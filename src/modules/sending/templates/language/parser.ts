import type { CompiledCondition, CompiledTemplate, Declared, Node, Path } from './ast.js';
import { Where } from './errors.js';
import { parseCondition, parseOutput, parsePath, type RootCheck } from './expressions.js';
import { lex, type Token } from './lexer.js';
import { encodeUrlParts } from './urls.js';

type IfNode = Extract<Node, { branches: unknown }>;
type EachNode = Extract<Node, { each: Path }>;
type UrlNode = Extract<Node, { url: Node[] }>;

/** An open block: where its tag began, and the list its next pieces go to. */
interface Open {
  kind: 'if' | 'each' | 'url';
  start: number;
  node: IfNode | EachNode | UrlNode;
  into: Node[];
  /** the `{{else}}` offset, once seen */
  elseAt: number | null;
}

const ALIAS = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['and', 'or', 'true', 'false', 'null']);
const LOOP_VARIABLES = new Set(['@index', '@first', '@last']);
/** Blocks inside blocks: far deeper than any email needs, shallow enough for the renderer's recursion. */
export const MAX_DEPTH = 50;

export interface CompileOptions {
  /**
   * Accept `{{#url link}}…{{/url}}` and `{{#url image}}…{{/url}}` around the
   * URL fields of a design: only in the sources a design generates, whose
   * fields were compiled on their own before, so no author writes them.
   */
  urlFields?: boolean;
}

/**
 * Source → tree, at publish (interface §2.4): every mistake and every
 * undeclared placeholder is refused with the field, line and column.
 */
export function compileTemplate(
  source: string,
  field: string,
  declared: Declared,
  options: CompileOptions = {},
): CompiledTemplate {
  const where = new Where(source, field);
  return { nodes: new Parser(where, declared, options.urlFields === true).parse(lex(source, where)) };
}

/** A design block's `when`: the condition of an `{{#if}}` on its own (line 1). */
export function compileCondition(source: string, field: string, declared: Declared): CompiledCondition {
  const where = new Where(source, field);
  return parseCondition(
    source,
    0,
    where,
    rootCheck(where, declared, () => ({ aliases: [], inLoop: false })),
  );
}

function rootCheck(where: Where, declared: Declared, scope: () => { aliases: string[]; inLoop: boolean }): RootCheck {
  return (root, offset) => {
    const { aliases, inLoop } = scope();
    if (root.startsWith('@')) {
      if (!LOOP_VARIABLES.has(root))
        throw where.error(offset, `unknown '${root}': inside {{#each}} there are @index, @first and @last`);
      if (!inLoop) throw where.error(offset, `${root} is only available inside {{#each}}`);
      return;
    }
    if (aliases.includes(root) || Object.hasOwn(declared, root)) return;
    throw where.error(offset, `variable '${root}' is not declared under variables`);
  };
}

class Parser {
  private readonly root: Node[] = [];
  private readonly open: Open[] = [];
  private readonly check: RootCheck;

  constructor(
    private readonly where: Where,
    private readonly declared: Declared,
    private readonly urlFields: boolean,
  ) {
    this.check = rootCheck(where, declared, () => {
      const live = this.open.filter((o) => o.kind === 'each' && o.elseAt === null);
      return { aliases: live.map((o) => (o.node as EachNode).as), inLoop: live.length > 0 };
    });
  }

  parse(tokens: Token[]): Node[] {
    for (const t of tokens) {
      if (t.kind === 'text') this.into().push(t.text);
      else this.tag(t);
    }
    const last = this.open[this.open.length - 1];
    if (last) throw this.where.error(last.start, `{{#${last.kind}}} is never closed (add {{/${last.kind}}})`);
    return this.root;
  }

  private into(): Node[] {
    return this.open.length ? this.open[this.open.length - 1].into : this.root;
  }

  private tag(t: Extract<Token, { kind: 'tag' }>): void {
    const lead = t.inner.length - t.inner.trimStart().length;
    const body = t.inner.trim();
    const at = t.innerStart + lead;
    if (body === '') throw this.where.error(t.start, 'empty {{ }}: a variable name is expected');
    const word = /^[#/]?[A-Za-z0-9_]*/.exec(body)![0];
    const rest = body.slice(word.length);
    const restAt = at + word.length + (rest.length - rest.trimStart().length);
    switch (word) {
      case '#if':
        return this.openIf(t.start, rest.trim(), restAt);
      case '#each':
        return this.openEach(t.start, rest.trim(), restAt);
      case 'else':
        return this.otherwise(t.start, rest.trim(), restAt);
      case '/if':
      case '/each':
        return this.close(t.start, word.slice(1) as 'if' | 'each', rest);
    }
    if (this.urlFields && word === '#url') return this.openUrl(t.start, rest.trim());
    if (this.urlFields && word === '/url') return this.close(t.start, 'url', rest);
    if (word.startsWith('#'))
      throw this.where.error(t.start, `unknown block {{${word}}}: there are {{#if}} and {{#each}}`);
    if (word.startsWith('/'))
      throw this.where.error(t.start, `unknown closing tag {{${word}}}: there are {{/if}} and {{/each}}`);
    this.into().push(parseOutput(body, at, this.where, this.check));
  }

  private openIf(start: number, cond: string, at: number): void {
    if (cond === '') throw this.where.error(start, "{{#if}} needs a condition, e.g. {{#if plan == 'pro'}}");
    this.checkDepth(start);
    const node: IfNode = {
      branches: [{ when: parseCondition(cond, at, this.where, this.check), body: [] }],
      otherwise: null,
    };
    this.into().push(node);
    this.open.push({ kind: 'if', start, node, into: node.branches[0].body, elseAt: null });
  }

  private openEach(start: number, spec: string, at: number): void {
    this.checkDepth(start);
    const m = /^(\S+)\s+as\s+(\S+)$/.exec(spec);
    if (!m) throw this.where.error(start, '{{#each}} needs a list and a name for its items: {{#each items as item}}');
    const list = parsePath(m[1], at, this.where, this.check);
    const aliasAt = at + spec.lastIndexOf(m[2]);
    if (!ALIAS.test(m[2]) || RESERVED.has(m[2]))
      throw this.where.error(aliasAt, `'${m[2]}' cannot name the items of a list (a name like item)`);
    const spec0 =
      list.keys.length === 0 &&
      Object.hasOwn(this.declared, list.root) &&
      !this.open.some((o) => (o.node as EachNode).as === list.root)
        ? this.declared[list.root]
        : undefined;
    if (spec0 && spec0.type !== 'array')
      throw this.where.error(at, `'${list.root}' is declared as ${spec0.type}: {{#each}} needs an array`);
    const node: EachNode = { each: list, as: m[2], body: [], otherwise: null };
    this.into().push(node);
    this.open.push({ kind: 'each', start, node, into: node.body, elseAt: null });
  }

  private openUrl(start: number, use: string): void {
    if (use !== 'link' && use !== 'image')
      throw this.where.error(start, '{{#url}} is for a link or an image: {{#url link}}');
    if (this.open.some((o) => o.kind === 'url')) throw this.where.error(start, '{{#url}} cannot stand inside {{#url}}');
    const node: UrlNode = { url: [], use: use, whole: false };
    this.into().push(node);
    this.open.push({ kind: 'url', start, node, into: node.url, elseAt: null });
  }

  private otherwise(start: number, rest: string, at: number): void {
    const o = this.open[this.open.length - 1];
    if (!o || o.kind === 'url') throw this.where.error(start, '{{else}} outside {{#if}} or {{#each}}');
    if (o.elseAt !== null)
      throw this.where.error(start, `no {{else …}} can follow the {{else}} of this block (${this.position(o.elseAt)})`);
    if (rest === '') {
      o.elseAt = start;
      o.into = (o.node as IfNode | EachNode).otherwise = [];
      return;
    }
    const cond = /^if(\s+|$)/.exec(rest);
    if (!cond) throw this.where.error(start, `{{else ${rest}}} is not a tag: {{else}} or {{else if condition}}`);
    if (o.kind === 'each') throw this.where.error(start, '{{else if}} belongs to {{#if}}, not {{#each}}');
    const text = rest.slice(cond[0].length);
    if (text === '') throw this.where.error(start, '{{else if}} needs a condition');
    const branch = { when: parseCondition(text, at + cond[0].length, this.where, this.check), body: [] as Node[] };
    (o.node as IfNode).branches.push(branch);
    o.into = branch.body;
  }

  private close(start: number, kind: Open['kind'], rest: string): void {
    if (rest.trim() !== '') throw this.where.error(start, `{{/${kind}}} takes nothing more`);
    const o = this.open.pop();
    if (!o) throw this.where.error(start, `{{/${kind}}} without a matching {{#${kind}}}`);
    if (o.kind !== kind)
      throw this.where.error(
        start,
        `{{/${kind}}} closes the {{#${o.kind}}} opened at ${this.position(o.start)}; close it with {{/${o.kind}}} first`,
      );
    if (o.kind === 'url') encodeUrlParts(o.node as UrlNode);
  }

  private checkDepth(start: number): void {
    if (this.open.length >= MAX_DEPTH) throw this.where.error(start, `blocks nest at most ${MAX_DEPTH} deep`);
  }

  private position(offset: number): string {
    const e = this.where.error(offset, '');
    return `line ${e.line}, column ${e.column}`;
  }
}
