import { Type, type Static } from '@sinclair/typebox';

export const ListInboundQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({ pattern: '^inb_[0-9a-z]{26}$', description: 'next_cursor of the previous page' }),
    ),
  },
  { additionalProperties: false },
);
export type ListInboundQuery = Static<typeof ListInboundQuery>;
