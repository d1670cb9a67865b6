import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { KEY_MODES, SCOPES } from './scopes.js';

/** POST /v1/api-keys (CONTRACT §5) */
export const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    mode: Type.Optional(StringEnum(KEY_MODES)),
    scopes: Type.Optional(Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true })),
    domain_id: Type.Optional(
      Type.String({
        pattern: '^dom_[0-9a-z]{26}$',
        description:
          "a domain of the project: the key may send only From that domain (the creating key's domain by default, if it has one)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** PATCH /v1/api-keys/{id}: a new name, or null for none. */
export const UpdateKeyBody = Type.Object(
  { name: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]) },
  { additionalProperties: false },
);
export type UpdateKeyBody = Static<typeof UpdateKeyBody>;
