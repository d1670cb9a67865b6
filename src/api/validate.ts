import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describeAjvError } from '../lib/ajv-errors.js';
import { validationError } from '../lib/errors.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// Bodies are taken as sent (no coercion, no defaults filled in that the
// client did not send); query strings are text, so they are coerced.
const bodyAjv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
const queryAjv = new Ajv({ allErrors: false, strict: true, coerceTypes: true, useDefaults: true });
addFormats(bodyAjv);
addFormats(queryAjv);

const compiled = new Map<Ajv, WeakMap<TSchema, ValidateFunction>>([
  [bodyAjv, new WeakMap()],
  [queryAjv, new WeakMap()],
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

/** Compile every schema up front so that a bad schema fails the start, not a request. */
export function precompile(kind: 'body' | 'query', schema: TSchema): void {
  compile(kind === 'body' ? bodyAjv : queryAjv, schema);
}

export function validateBody<T>(schema: TSchema, value: unknown): T {
  return check(compile(bodyAjv, schema), value, 'body');
}

export function validateQuery<T>(schema: TSchema, value: Record<string, unknown>): T {
  return check(compile(queryAjv, schema), value, 'query');
}

function check<T>(validate: ValidateFunction, value: unknown, root: string): T {
  if (validate(value)) return value as T;
  const { field, message } = describeAjvError(validate.errors![0]!, root);
  throw validationError(field, message);
}
