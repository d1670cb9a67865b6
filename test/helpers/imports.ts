import { statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import ts from 'typescript';

/** A layer's row of the table: the layers it may import, or `*` for all. */
export type LayerTable = Map<string, ReadonlySet<string> | '*'>;

const TABLE = /<!--\s*layering:[\s\S]*?-->([\s\S]*?)<!--\s*\/layering\s*-->/;
const TICKED = /`([^`]+)`/g;

const ticked = (cell: string) => [...cell.matchAll(TICKED)].map((m) => m[1].trim());

/**
 * The table between `<!-- layering: … -->` and `<!-- /layering -->`: first
 * column the layer in backticks, second the layers it may import. A header
 * row (no backticks) and the `|---|` row are skipped.
 */
export function parseLayerTable(markdown: string): LayerTable {
  const block = TABLE.exec(markdown);
  if (!block) throw new Error('no <!-- layering: … --> … <!-- /layering --> table');
  const table: LayerTable = new Map();
  for (const row of block[1].split('\n').map((l) => l.trim())) {
    if (!row.startsWith('|') || /^\|[\s:|-]*$/.test(row)) continue;
    const cells = row.replace(/^\||\|$/g, '').split('|');
    const [layer] = ticked(cells[0] ?? '');
    if (!layer) continue;
    if (table.has(layer)) throw new Error(`layer \`${layer}\` has two rows`);
    const allowed = ticked(cells[1] ?? '');
    table.set(layer, allowed.includes('*') ? '*' : new Set(allowed));
  }
  if (table.size === 0) throw new Error('the layering table has no rows');
  return table;
}

/** One module specifier a file names, with where and whether only for types. */
export interface ImportRef {
  specifier: string;
  line: number;
  typeOnly: boolean;
}

const isStringy = (n: ts.Node | undefined): n is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral =>
  !!n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n));

function importClauseIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return (
    !clause.name &&
    !!named &&
    ts.isNamedImports(named) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly)
  );
}

function exportIsTypeOnly(decl: ts.ExportDeclaration): boolean {
  const clause = decl.exportClause;
  return (
    decl.isTypeOnly ||
    (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly))
  );
}

/** The specifier a node names, if it is an import of any form; typeOnly when it brings only types. */
function importOf(node: ts.Node): { spec: ts.Node; typeOnly: boolean } | null {
  if (ts.isImportDeclaration(node))
    return { spec: node.moduleSpecifier, typeOnly: importClauseIsTypeOnly(node.importClause) };
  if (ts.isExportDeclaration(node) && node.moduleSpecifier)
    return { spec: node.moduleSpecifier, typeOnly: exportIsTypeOnly(node) };
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    return { spec: node.moduleReference.expression, typeOnly: node.isTypeOnly };
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
    return { spec: node.arguments[0], typeOnly: false };
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
    return { spec: node.argument.literal, typeOnly: true };
  return null;
}

/**
 * Every import of a file: `import … from`, `import type`, `export … from`,
 * `import x = require()`, `import('…')` with a string literal and the type
 * `import('…').T`.
 */
export function importsOf(sf: ts.SourceFile): ImportRef[] {
  const found: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    const imp = importOf(node);
    if (imp && isStringy(imp.spec)) {
      found.push({
        specifier: imp.spec.text,
        line: sf.getLineAndCharacterOfPosition(imp.spec.getStart(sf)).line + 1,
        typeOnly: imp.typeOnly,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

export type Resolved =
  { kind: 'package' } | { kind: 'outside' } | { kind: 'file'; path: string } | { kind: 'missing'; path: string };

const isRelative = (spec: string) =>
  spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/');

function candidates(target: string): string[] {
  const ext = /\.[cm]?js$/.exec(target)?.[0];
  if (ext) {
    const stem = target.slice(0, -ext.length);
    return [`${stem}${ext.replace('js', 'ts')}`, ...(ext === '.js' ? [`${stem}.tsx`] : []), target];
  }
  return [target, `${target}.ts`, `${target}/index.ts`];
}

/** Where `spec`, imported by the file `from`, lands: a package, outside `root`, a file in it, or nothing. */
export function resolveImport(from: string, spec: string, root: string): Resolved {
  if (!isRelative(spec)) return { kind: 'package' };
  const target = resolve(dirname(from), spec);
  const rel = relative(root, target);
  if (rel.startsWith('..') || isAbsolute(rel)) return { kind: 'outside' };
  const path = candidates(target).find((c) => statSync(c, { throwIfNoEntry: false })?.isFile());
  return path ? { kind: 'file', path } : { kind: 'missing', path: target };
}

/**
 * Tarjan's strongly connected components, in reverse topological order.
 * Every node comes out in exactly one component; a cycle is a component of
 * more than one node (or one node with an edge to itself).
 */
export function stronglyConnected<T>(nodes: Iterable<T>, edges: (n: T) => Iterable<T>): T[][] {
  const index = new Map<T, number>();
  const low = new Map<T, number>();
  const stack: T[] = [];
  const onStack = new Set<T>();
  const components: T[][] = [];
  const connect = (v: T): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges(v)) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: T[] = [];
    let w: T;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    components.push(component);
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return components;
}
