// The compiled form of a template (CONTRACT §6): what a version stores, so
// that a send walks a tree instead of parsing again. Plain JSON: it is saved
// with the version and read back by JSON.parse.

export type VariableType = 'string' | 'number' | 'boolean' | 'array' | 'object';
export const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'boolean', 'array', 'object'];

export interface VariableSpec {
  type: VariableType;
  required: boolean;
}

/** The variables a version declares (interface §4.3 `variables`, defaults filled in). */
export type Declared = Record<string, VariableSpec>;

/** `a.b.0.c`: a root (a variable, a loop alias, or @index/@first/@last) and the keys below it. */
export interface Path {
  root: string;
  keys: string[];
}

export const FILTER_NAMES = [
  'upper',
  'lower',
  'capitalize',
  'trim',
  'truncate',
  'number',
  'currency',
  'date',
  'url',
] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

/** One segment of a pipe: a filter (with its checked argument) or a fallback text. */
export type PipeStep = { filter: FilterName; arg: string | number | null } | { fallback: string };

export type CompareOp = '==' | '!=' | '>' | '>=' | '<' | '<=';
export type Literal = string | number | boolean | null;

export type Condition =
  | { or: Condition[] }
  | { and: Condition[] }
  | { not: Path }
  | { truthy: Path }
  | { compare: Path; op: CompareOp; value: Literal };

/** What a URL of a design is for: a link is followed, an image source is only fetched. */
export type UrlUse = 'link' | 'image';

export type Node =
  | string
  | { out: Path; pipe: PipeStep[] }
  | { branches: Array<{ when: Condition; body: Node[] }>; otherwise: Node[] | null }
  | { each: Path; as: string; body: Node[]; otherwise: Node[] | null }
  /**
   * A URL field of a design (only in the sources a design generates): its
   * placeholders are percent-encoded, except one that opens it (`whole`),
   * whose value is taken as the URL itself; the rendered URL is checked
   * (urls.ts) and replaced by `#` when it is refused.
   */
  | { url: Node[]; use: UrlUse; whole: boolean };

export interface CompiledTemplate {
  nodes: Node[];
}

export type CompiledCondition = Condition;
