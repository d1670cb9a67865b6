import { Type, type Static, type TSchema } from '@sinclair/typebox';

// TypeBox helpers that keep the emitted JSON Schema plain (enum, type arrays)
// so that ajv's errors stay readable ("must be one of …") and the OpenAPI
// document shows what a client sends.

export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<Static<T> | null>({
    ...schema,
    type: [(schema as unknown as { type: string }).type, 'null'],
    ...options,
  });

/** A text without NUL, which PostgreSQL's text cannot hold: refused naming the field rather than failing the insert. */
export const NoNulString = (options: Record<string, unknown> = {}) =>
  Type.String({ pattern: '^[^\\u0000]*$', ...options });

/** `limit` and `cursor` of a list newest first whose cursor is the id (with `prefix`) the previous page ended with. */
export const pageQueryFields = (prefix: string) => ({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(
    Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$`, description: 'next_cursor of the previous page' }),
  ),
});
