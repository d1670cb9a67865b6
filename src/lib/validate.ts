import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describeAjvError } from './ajv-errors.js';
import { validationError } from './errors.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// Bodies are taken as sent (no coercion, no defaults filled in that the
// client did not send); query strings are text, so they are coerced.
const bodyAjv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
const queryAjv = new Ajv({ allErrors: false, strict: true, coerceTypes: true, useDefaults: true });
// Only on the error path: every error of a refused body, so that an unknown field (often a
// misspelled one) is named before the "required" error it causes.
const bodyAjvAll = new Ajv({ allErrors: true, strict: true, coerceTypes: false, useDefaults: false });
addFormats(bodyAjv);
addFormats(queryAjv);
addFormats(bodyAjvAll);

const compiled = new Map<Ajv, WeakMap<TSchema, ValidateFunction>>([
  [bodyAjv, new WeakMap()],
  [queryAjv, new WeakMap()],
  [bodyAjvAll, new WeakMap()],
]);

function compile(ajv: Ajv, schema: TSchema): ValidateFunction {
  const cache = compiled.get(ajv)!;
  let v = cache.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    cache.set(schema, v);
  }
  return v;
}

/** Compiles a route's schema now (test/unit/route-schemas.test.ts compiles every route's: a bad schema fails the tests). */
export function precompile(kind: 'body' | 'query', schema: TSchema): void {
  compile(kind === 'body' ? bodyAjv : queryAjv, schema);
}

export function validateBody<T>(schema: TSchema, value: unknown): T {
  if (compile(bodyAjv, schema)(value)) return value as T;
  const all = compile(bodyAjvAll, schema);
  all(value);
  const errors = all.errors ?? [];
  const first = errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0];
  const { field, message } = describeAjvError(first, 'body');
  throw validationError(field, message);
}

export function validateQuery<T>(schema: TSchema, value: Record<string, unknown>): T {
  return check(compile(queryAjv, schema), value, 'query');
}

function check<T>(validate: ValidateFunction, value: unknown, root: string): T {
  if (validate(value)) return value as T;
  const { field, message } = describeAjvError(validate.errors![0], root);
  throw validationError(field, message);
}
