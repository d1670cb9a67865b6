import { Type, type TSchema } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../lib/duration.js';
import { Nullable as NullableOf } from '../lib/schema.js';

// The kinds of config key the sections of the schema are made of: each carries
// its default and its description, which docs/CONFIG.md prints.

export const Nullable = <T extends TSchema>(schema: T, description: string) =>
  NullableOf(schema, { default: null, description });

export const Duration = (def: string, description: string) =>
  Type.String({ pattern: DURATION_PATTERN, default: def, description });

export const Port = (def: number, description: string) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: def, description });
