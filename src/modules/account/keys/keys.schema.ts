import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { KEY_MODES, SCOPES } from './scopes.js';

/** POST /v1/api-keys (CONTRACT §5) */
export const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    mode: Type.Optional(StringEnum(KEY_MODES)),
    scopes: Type.Optional(Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;
