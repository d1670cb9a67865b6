import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../lib/schema.js';

/** GET /v1/emails (interface §4.1) */
export const ListEmailsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ pattern: '^msg_[0-9a-z]{26}$', description: 'next_cursor of the previous page' })),
    status: Type.Optional(StringEnum(['queued', 'submitting', 'accepted', 'ambiguous', 'failed', 'suppressed', 'scheduled'] as const)),
    to: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
  },
  { additionalProperties: false },
);
export type ListEmailsQuery = Static<typeof ListEmailsQuery>;
