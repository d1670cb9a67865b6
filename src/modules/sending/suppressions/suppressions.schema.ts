import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { SUPPRESSION_REASONS } from './suppression.js';

export const ListSuppressionsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'next_cursor of the previous page',
      }),
    ),
    reason: Type.Optional(StringEnum(SUPPRESSION_REASONS)),
    email: Type.Optional(
      Type.String({ minLength: 1, maxLength: 320, description: 'a part of the address, case-insensitive' }),
    ),
  },
  { additionalProperties: false },
);
export type ListSuppressionsQuery = Static<typeof ListSuppressionsQuery>;

export const AddSuppressionBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    reason: Type.Optional(
      StringEnum(SUPPRESSION_REASONS, {
        description:
          'manual unless given: bounce, complaint or unsubscribe when importing a list kept elsewhere (unsubscribe stops only sends that ask for List-Unsubscribe)',
      }),
    ),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'when the suppression ends (future); for ever unless given' }),
    ),
  },
  { additionalProperties: false },
);
export type AddSuppressionBody = Static<typeof AddSuppressionBody>;
