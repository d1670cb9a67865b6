import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import {
  importsOf,
  parseLayerTable,
  resolveImport,
  stronglyConnected,
  type ImportRef,
  type LayerTable,
} from '../helpers/imports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const ARCHITECTURE = join(ROOT, 'docs', 'ARCHITECTURE.md');

/** No I/O in these: they may name a repo, `store` or `net` module, or an I/O module of Node, only with `import type`. */
const PURE = [
  ...[
    'lifecycle',
    'lifecycle-accept',
    'lifecycle-moves',
    'lifecycle-outcomes',
    'lifecycle-reports',
    'accept-rules',
    'prepare',
    'limits',
    'simulate',
    'idempotency',
  ].map((f) => `modules/sending/emails/${f}.ts`),
  ...['verification', 'domain-state', 'insights', 'dkim-rotation'].map((f) => `modules/deliverability/domains/${f}.ts`),
  'modules/deliverability/blocklists/dnsbl.ts',
  'modules/deliverability/blocklists/dnsbl-answers.ts',
  'modules/receiving/unsubscribe/unsubscribe-token.ts',
  'modules/audience/preferences/preference-token.ts',
  ...['form-rules', 'confirm-token', 'confirmation-mail'].map((f) => `modules/audience/forms/${f}.ts`),
  'modules/audience/contacts/contact-properties.ts',
  ...['broadcast', 'broadcast-content'].map((f) => `modules/audience/broadcasts/${f}.ts`),
  'modules/audience/segments/segment-filter.ts',
  'modules/audience/contacts/contact-import.ts',
  'modules/sending/emails/list-unsubscribe.ts',
  ...['report-file', 'report-xml', 'dmarc-summary'].map((f) => `modules/receiving/dmarc/${f}.ts`),
  'mta/classify-reply.ts',
  'mta/screen-recipients.ts',
  'modules/notifying/webhooks/in-flight.ts',
  ...['resend-payload', 'webhook-formats'].map((f) => `modules/notifying/webhooks/${f}.ts`),
  ...[
    'natural-time',
    'resend-emails',
    'resend-errors',
    'resend-variables',
    'resend-broadcasts',
    'resend-templates',
    'resend-templates.presenter',
    'resend-segments',
    'resend-contacts-pages',
  ].map((f) => `modules/compat/resend/${f}.ts`),
  ...['classify-bounce', 'dsn', 'mime', 'plain-bounce', 'report', 'ses-notification', 'verp'].map(
    (f) => `modules/receiving/bounces/${f}.ts`,
  ),
  'modules/deliverability/verify/syntax.ts',
  'modules/deliverability/verify/typo.ts',
  'dns/checks.ts',
  'dns/packet-check.ts',
  'modules/receiving/inbound/read-inbound.ts',
  ...[
    'html',
    'layout',
    'charts',
    'emails',
    'email-detail',
    'domains',
    'domain-insights',
    'webhooks',
    'templates',
    'template-detail',
    'template-preview',
    'inbound',
    'inbound-reading',
    'suppressions',
    'keys',
    'usage',
    'sign-in',
  ].map((f) => `dashboard/pages/${f}.ts`),
  'modules/operations/doctor/verdicts.ts',
  'modules/operations/doctor/machine-verdicts.ts',
  'modules/account/logs/request-log.ts',
  'modules/notifying/webhooks/endpoint-windows.ts',
  'modules/operations/retention/retention-rules.ts',
  ...['versions', 'render-version', 'text-from-html', 'template-changes'].map(
    (f) => `modules/sending/templates/${f}.ts`,
  ),
  ...[
    'ast',
    'errors',
    'expressions',
    'filters',
    'index',
    'lexer',
    'parser',
    'render',
    'urls',
    'variables',
    'written-urls',
  ].map((f) => `modules/sending/templates/language/${f}.ts`),
  ...[
    'check-design',
    'design-source',
    'design.schema',
    'html-blocks',
    'html-blocks-rich',
    'html-document',
    'html-parts',
    'palette',
    'source-text',
    'text-blocks',
  ].map((f) => `modules/sending/templates/design/${f}.ts`),
];
const IO_MODULES = /^(node:)?(fs|net|http|dns|child_process)(\/|$)/;
const KNEX_HANDLES = new Set(['trx', 'db', 'knex', 'reader', 'sp', 'writer']);
const QUERY_METHODS = new Set([
  'raw',
  'whereRaw',
  'whereIn',
  'forUpdate',
  'skipLocked',
  'onConflict',
  'insert',
  'update',
  'delete',
]);
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 60;

/** An import of one src file by another; paths relative to src/, with `/`. */
interface Edge {
  from: string;
  to: string;
  line: number;
  spec: string;
  typeOnly: boolean;
}

interface Source {
  rel: string;
  sf: ts.SourceFile;
  lines: string[];
  edges: Edge[];
  packages: ImportRef[];
  unresolved: ImportRef[];
}

const posix = (p: string) => p.split(sep).join('/');
const at = (rel: string, line: number) => `src/${rel}:${line}`;
const describeEdge = (e: Edge) => `${at(e.from, e.line)} imports '${e.spec}'${e.typeOnly ? ' (type only)' : ''}`;
const isRepo = (rel: string) => rel.endsWith('.repo.ts');

/** `root` for main.ts and background-thread.ts, otherwise the first folder under src/. */
const layerOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0] : 'root');

/** The folder a file counts in for cycles: `modules/<area>/<feature>`, `cli` and `api` with their subfolders, else its directory. */
function folderOf(rel: string): string {
  const parts = rel.split('/').slice(0, -1);
  if (parts.length === 0) return 'root';
  if (parts[0] === 'modules') return parts.slice(0, 3).join('/');
  if (parts[0] === 'cli' || parts[0] === 'api') return parts[0];
  return parts.join('/');
}

function loadSource(rel: string): Source {
  const path = join(SRC, rel);
  const text = readFileSync(path, 'utf8');
  const source: Source = {
    rel,
    sf: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS),
    lines: text.split('\n'),
    edges: [],
    packages: [],
    unresolved: [],
  };
  for (const ref of importsOf(source.sf)) {
    const where = resolveImport(path, ref.specifier, SRC);
    if (where.kind === 'package') source.packages.push(ref);
    if (where.kind === 'missing') source.unresolved.push(ref);
    if (where.kind === 'file')
      source.edges.push({
        from: rel,
        to: posix(relative(SRC, where.path)),
        line: ref.line,
        spec: ref.specifier,
        typeOnly: ref.typeOnly,
      });
  }
  return source;
}

function loadSources(): Source[] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).map(posix);
  return files
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map(loadSource);
}

/** Every failure at once: the message lists them all, one a line. */
function expectNone(what: string, found: string[]): void {
  if (found.length) expect.fail(`${found.length} ${what}:\n  ${found.join('\n  ')}`);
}

/** Cycles of the graph whose nodes are `nodeOf(file)`, each with one example import per edge inside it. */
function cyclesOf(edges: Edge[], nodeOf: (rel: string) => string, selfLoops: boolean): string[] {
  const graph = new Map<string, Map<string, Edge>>();
  for (const e of edges) {
    const [a, b] = [nodeOf(e.from), nodeOf(e.to)];
    if (a === b && !selfLoops) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, e);
  }
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flatMap((m) => [...m.keys()])])].sort();
  const cycles = stronglyConnected(nodes, (n) => graph.get(n)?.keys() ?? []).filter(
    (c) => c.length > 1 || graph.get(c[0])?.has(c[0]),
  );
  return cycles.map((cycle) => {
    const members = new Set(cycle);
    const inside = [...members]
      .sort()
      .flatMap((a) =>
        [...(graph.get(a) ?? [])].filter(([b]) => members.has(b)).map(([b, e]) => `${a} → ${b}: ${describeEdge(e)}`),
      );
    return `${[...members].sort().join(', ')}\n    ${inside.join('\n    ')}`;
  });
}

const unwrap = (e: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAsExpression(e) ? unwrap(e.expression) : e;

/** `trx`, `db`, `deps.store.knex`, `this.reader`: the names a knex handle goes by here. */
function isHandle(e: ts.Expression): boolean {
  const x = unwrap(e);
  const name = ts.isIdentifier(x) ? x.text : ts.isPropertyAccessExpression(x) ? x.name.text : null;
  return name !== null && KNEX_HANDLES.has(name);
}

/** Names of the file's `const X = 'literal'`, the usual way a table name is kept. */
function stringConstants(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (
      ts.isVariableDeclaration(n) &&
      ts.isIdentifier(n.name) &&
      n.initializer &&
      ts.isStringLiteralLike(n.initializer)
    )
      names.add(n.name.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return names;
}

const isTableName = (a: ts.Expression | undefined, constants: Set<string>) =>
  !!a && (ts.isStringLiteralLike(a) || ts.isTemplateExpression(a) || (ts.isIdentifier(a) && constants.has(a.text)));

/** `trx('emails')`, `store.knex(TABLE)`: a query builder started on a table. */
const isTableCall = (n: ts.Node, constants: Set<string>): n is ts.CallExpression =>
  ts.isCallExpression(n) && isHandle(n.expression) && isTableName(n.arguments[0], constants);

function chainedOnTable(e: ts.Expression, constants: Set<string>): boolean {
  for (let x = unwrap(e); ; x = unwrap(x.expression)) {
    if (isTableCall(x, constants)) return true;
    if (!ts.isCallExpression(x) && !ts.isPropertyAccessExpression(x) && !ts.isElementAccessExpression(x)) return false;
  }
}

function isQuery(n: ts.Node, constants: Set<string>): boolean {
  if (isTableCall(n, constants)) return true;
  if (!ts.isCallExpression(n)) return false;
  const callee = unwrap(n.expression);
  if (!ts.isPropertyAccessExpression(callee) || !QUERY_METHODS.has(callee.name.text)) return false;
  return chainedOnTable(callee.expression, constants) || (callee.name.text === 'raw' && isHandle(callee.expression));
}

/** The whole chain a call is part of: `trx('t')` → `trx('t').where(…).update(…)`. */
function chainTop(n: ts.Node): ts.Node {
  let cur = n;
  for (;;) {
    const p = cur.parent;
    const chained =
      ts.isPropertyAccessExpression(p) ||
      ts.isElementAccessExpression(p) ||
      ts.isCallExpression(p) ||
      ts.isNonNullExpression(p);
    if (!chained || p.expression !== cur) return cur;
    cur = p;
  }
}

/** Every knex query of a file, once per chain (a subquery inside a reported chain is not reported again). */
function queriesOf(s: Source): string[] {
  const constants = stringConstants(s.sf);
  const found: ts.Node[] = [];
  const visit = (n: ts.Node): void => {
    if (isQuery(n, constants)) {
      const top = chainTop(n);
      if (!found.some((f) => f.pos <= top.pos && top.end <= f.end)) found.push(top);
    }
    ts.forEachChild(n, visit);
  };
  visit(s.sf);
  return found.map((n) => {
    const text = n.getText(s.sf).replace(/\s+/g, ' ');
    return `${at(s.rel, lineOf(s.sf, n))} ${text.length > 140 ? `${text.slice(0, 137)}...` : text}`;
  });
}

type Fn =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.AccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

const lineOf = (sf: ts.SourceFile, n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;

function isMeasured(n: ts.Node): n is Fn {
  if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) return ts.isBlock(n.body);
  const declared =
    ts.isFunctionDeclaration(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessor(n) ||
    ts.isSetAccessor(n);
  return declared && !!n.body;
}

function nameOf(fn: Fn, sf: ts.SourceFile): string {
  const owner = (n: ts.Node) => (ts.isClassLike(n.parent) ? `${n.parent.name?.text ?? '(class)'}.` : '');
  if (ts.isConstructorDeclaration(fn)) return `${owner(fn)}constructor`;
  if (fn.name) return owner(fn) + fn.name.getText(sf);
  const p = fn.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))
    return owner(p) + p.name.getText(sf);
  if (ts.isCallExpression(p)) return `callback of ${p.expression.getText(sf).replace(/\s+/g, ' ').slice(-40)}`;
  return '(anonymous)';
}

/** The statement, class member or object property a function is part of: where its comment sits. */
function anchorOf(n: ts.Node): ts.Node {
  let cur = n;
  for (;;) {
    const p = cur.parent;
    if (
      !p ||
      ts.isSourceFile(p) ||
      ts.isBlock(p) ||
      ts.isModuleBlock(p) ||
      ts.isCaseOrDefaultClause(p) ||
      ts.isClassLike(p) ||
      ts.isObjectLiteralExpression(p)
    )
      return cur;
    cur = p;
  }
}

/** A `long: reason` on the line above `line` (1-based) or in the comment block right above it. */
function reasonAbove(lines: string[], line: number): boolean {
  for (let i = line - 2; i >= 0; i--) {
    const t = lines[i].trim();
    if (!/^(\/\/|\/\*|\*)/.test(t)) return false;
    if (/^(\/\/+|\/\*+|\*)\s*long:\s*\S/.test(t)) return true;
  }
  return false;
}

function longFunctionsOf(s: Source): string[] {
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (isMeasured(n)) {
      const start = lineOf(s.sf, n);
      const length = s.sf.getLineAndCharacterOfPosition(n.end).line + 2 - start;
      const excused = reasonAbove(s.lines, start) || reasonAbove(s.lines, lineOf(s.sf, anchorOf(n)));
      if (length > MAX_FUNCTION_LINES && !excused)
        found.push(`${nameOf(n, s.sf)} (${at(s.rel, start)}) is ${length} lines`);
    }
    ts.forEachChild(n, visit);
  };
  visit(s.sf);
  return found;
}

const lineCount = (s: Source) => s.lines.length - (s.lines.at(-1) === '' ? 1 : 0);

describe('layering (docs/ARCHITECTURE.md)', function () {
  let table: LayerTable;
  let sources: Source[];
  let edges: Edge[];

  before(function () {
    table = parseLayerTable(readFileSync(ARCHITECTURE, 'utf8'));
    sources = loadSources();
    edges = sources.flatMap((s) => s.edges);
  });

  it('every import follows an arrow the architecture allows', function () {
    const found: string[] = [];
    for (const [layer, allowed] of table) {
      for (const l of allowed === '*' ? [] : allowed)
        if (!table.has(l)) found.push(`the row of \`${layer}\` names \`${l}\`, which has no row`);
    }
    for (const s of sources) {
      if (!table.has(layerOf(s.rel))) found.push(`src/${s.rel}: layer \`${layerOf(s.rel)}\` has no row in the table`);
      for (const ref of s.unresolved) found.push(`${at(s.rel, ref.line)} imports '${ref.specifier}', which is no file`);
    }
    for (const e of edges) {
      const [from, to] = [layerOf(e.from), layerOf(e.to)];
      const allowed = table.get(from);
      if (from !== to && allowed && allowed !== '*' && !allowed.has(to))
        found.push(`${from} → ${to}: ${describeEdge(e)}`);
    }
    expectNone('imports the table of docs/ARCHITECTURE.md does not allow', found);
  });

  it('no import cycle between folders or layers', function () {
    const folders = cyclesOf(edges, folderOf, false).map((c) => `folders ${c}`);
    const layers = cyclesOf(edges, layerOf, false).map((c) => `layers ${c}`);
    expectNone('import cycles', [...folders, ...layers]);
  });

  it('no import cycle between files', function () {
    expectNone(
      'import cycles between files',
      cyclesOf(edges, (rel) => rel, true).map((c) => `files ${c}`),
    );
  });

  it('SQL only in repos and src/store', function () {
    const checked = sources.filter((s) => !isRepo(s.rel) && layerOf(s.rel) !== 'store');
    expectNone('knex queries outside *.repo.ts and src/store', checked.flatMap(queriesOf));
  });

  it('the API and the CLI call services, not repos', function () {
    const found = edges.filter((e) => ['api', 'cli'].includes(layerOf(e.from)) && isRepo(e.to));
    expectNone('imports of a repo from src/api or src/cli', found.map(describeEdge));
  });

  it('pure modules do no I/O', function () {
    const isPure = (rel: string) => PURE.includes(rel) || layerOf(rel) === 'lib';
    const found = PURE.filter((rel) => !sources.some((s) => s.rel === rel)).map(
      (rel) => `src/${rel} is listed as pure but is gone`,
    );
    for (const s of sources.filter((x) => isPure(x.rel))) {
      for (const e of s.edges) {
        const effectful = isRepo(e.to) || ['store', 'net'].includes(layerOf(e.to));
        if (layerOf(s.rel) === 'lib' && layerOf(e.to) !== 'lib') found.push(`${describeEdge(e)}: lib imports only lib`);
        else if (effectful && !e.typeOnly) found.push(`${describeEdge(e)}: not with import type`);
      }
      for (const p of s.packages)
        if (IO_MODULES.test(p.specifier) && !p.typeOnly) found.push(`${at(s.rel, p.line)} imports '${p.specifier}'`);
    }
    expectNone('pure modules reaching for I/O', found);
  });

  it('no file over 300 lines, no function over 60 lines without a reason', function () {
    const files = sources
      .filter((s) => lineCount(s) > MAX_FILE_LINES)
      .map((s) => `src/${s.rel} is ${lineCount(s)} lines`);
    const functions = sources.flatMap(longFunctionsOf);
    expectNone(
      `files over ${MAX_FILE_LINES} lines or functions over ${MAX_FUNCTION_LINES} lines without a \`// long: reason\` above`,
      [...files, ...functions],
    );
  });
});
