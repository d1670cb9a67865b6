import type { CompiledCondition, Declared } from '../../sending/templates/language/index.js';
import { compileCondition, TemplateError, testCondition } from '../../sending/templates/language/index.js';
import type { ContactProperty, PropertyValue } from '../contacts/contact-properties.js';

// A segment's filter (issue 27): a condition in the language of templates' {{#if}}
// (`plan == 'pro' and signup_date >= '2026-01-01'`) over a contact's fields and declared
// properties. Pure.

/** What a filter may name besides the project's properties. */
export const CONTACT_FIELDS = ['email', 'first_name', 'last_name', 'created_at'] as const;

const TYPE_OF: Record<ContactProperty['type'], Declared[string]['type']> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  date: 'string',
};

export function declaredFor(properties: readonly ContactProperty[]): Declared {
  const out: Declared = {};
  for (const f of CONTACT_FIELDS) out[f] = { type: 'string', required: false };
  for (const p of properties) out[p.key] = { type: TYPE_OF[p.type], required: false };
  return out;
}

/** The filter compiled, or the mistake with its line and column (`filter line 1, column 6: …`). */
export function compileFilter(
  source: string,
  properties: readonly ContactProperty[],
): { ok: true; compiled: CompiledCondition; roots: string[] } | { ok: false; message: string } {
  try {
    const compiled = compileCondition(source, 'filter', declaredFor(properties));
    return { ok: true, compiled, roots: [...rootsOf(compiled)].sort() };
  } catch (e) {
    if (e instanceof TemplateError) return { ok: false, message: e.message };
    throw e;
  }
}

function rootsOf(c: CompiledCondition, out = new Set<string>()): Set<string> {
  if ('and' in c) c.and.forEach((x) => rootsOf(x, out));
  else if ('or' in c) c.or.forEach((x) => rootsOf(x, out));
  else out.add(('truthy' in c ? c.truthy : 'not' in c ? c.not : c.compare).root);
  return out;
}

/** A contact as a filter sees it: its fields, and its properties with their fallbacks where it has none. */
export function contactValues(
  c: {
    email: string;
    firstName: string | null;
    lastName: string | null;
    createdAt: number;
    properties: Record<string, PropertyValue>;
  },
  properties: readonly ContactProperty[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    created_at: new Date(c.createdAt).toISOString(),
  };
  for (const p of properties) values[p.key] = Object.hasOwn(c.properties, p.key) ? c.properties[p.key] : p.fallback;
  return values;
}

export const matches = (compiled: CompiledCondition, values: Record<string, unknown>) =>
  testCondition(compiled, values);
