import { Type, type Static, type TSchema } from '@sinclair/typebox';

// TypeBox helpers that keep the emitted JSON Schema plain (enum, type arrays)
// so that ajv's errors stay readable ("must be one of …") and the OpenAPI
// document shows what a client sends.

export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [(schema as unknown as { type: string }).type, 'null'], ...options });
