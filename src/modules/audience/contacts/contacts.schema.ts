import { Type, type Static } from '@sinclair/typebox';
import { NoNulString, pageQueryFields, StringEnum } from '../../../lib/schema.js';
import { PROPERTY_TYPES } from './contact-properties.js';

const Value = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const Name = NoNulString({ maxLength: 200 });

export const CreatePropertyBody = Type.Object(
  {
    key: Type.String({
      pattern: '^[a-z_][a-z0-9_]{0,49}$',
      description: 'lower-case letters, digits and _, not starting with a digit',
    }),
    type: StringEnum(PROPERTY_TYPES),
    fallback: Type.Optional(
      Type.Union([Value, Type.Null()], {
        description: 'the value templates use for a contact without one; of the property type',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePropertyBody = Static<typeof CreatePropertyBody>;

export const CreateContactBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    first_name: Type.Optional(Type.Union([Name, Type.Null()])),
    last_name: Type.Optional(Type.Union([Name, Type.Null()])),
    properties: Type.Optional(
      Type.Record(Type.String(), Type.Union([Value, Type.Null()]), {
        description: 'values of declared contact properties',
      }),
    ),
    unsubscribed: Type.Optional(Type.Boolean({ description: 'unsubscribed from all broadcast mail' })),
    topics: Type.Optional(
      Type.Record(Type.String({ pattern: '^top_[0-9a-z]{26}$' }), Type.Boolean(), {
        description: 'subscribed (true) or not (false) to each named topic; the others keep their default',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateContactBody = Static<typeof CreateContactBody>;

export const UpdateContactBody = Type.Partial(CreateContactBody, { additionalProperties: false });
export type UpdateContactBody = Static<typeof UpdateContactBody>;

export const CreateContactQuery = Type.Object(
  {
    upsert: Type.Optional(
      Type.Boolean({
        description: 'true: a contact with this address is updated (200) instead of refused (409 contact_exists)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListContactsQuery = Type.Object(
  {
    ...pageQueryFields('con'),
    audience_id: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    segment_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: "the segment's contacts now (alone: not with audience_id or email)",
      }),
    ),
    email: Type.Optional(
      NoNulString({ minLength: 1, maxLength: 320, description: 'a part of the address, case-insensitive' }),
    ),
  },
  { additionalProperties: false },
);
export type ListContactsQuery = Static<typeof ListContactsQuery>;
