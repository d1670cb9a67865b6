import { Type, type Static } from '@sinclair/typebox';
import { NoNulString, pageQueryFields } from '../../../lib/schema.js';

export const CreateAudienceBody = Type.Object(
  { name: NoNulString({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export type CreateAudienceBody = Static<typeof CreateAudienceBody>;

export const AddContactsBody = Type.Object(
  {
    contact_ids: Type.Optional(
      Type.Array(Type.String({ pattern: '^con_[0-9a-z]{26}$' }), {
        minItems: 1,
        maxItems: 1000,
        description: 'contacts of the project',
      }),
    ),
    emails: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 320 }), {
        minItems: 1,
        maxItems: 1000,
        description: 'addresses: a contact is made for one the project does not have',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AddContactsBody = Static<typeof AddContactsBody>;

export const ListAudiencesQuery = Type.Object(pageQueryFields('aud'), { additionalProperties: false });
export type ListAudiencesQuery = Static<typeof ListAudiencesQuery>;
