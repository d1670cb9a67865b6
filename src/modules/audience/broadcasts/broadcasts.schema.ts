import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { NoNulString, pageQueryFields } from '../../../lib/schema.js';
import { SendEmailBody } from '../../sending/emails/emails.schema.js';
import { TEMPLATE_ID_PATTERN } from '../../sending/templates/templates.schema.js';

// Issue 27 (docs/broadcasts.md): the content fields are those of POST /v1/emails, with their limits,
// and none of their texts may hold a NUL: a draft stores them, and PostgreSQL's text cannot hold one.
const sent = SendEmailBody.properties;
const id = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$` });
// without Optional, for PATCH's `null` (take the field away)
const base = {
  from: NoNulString({ minLength: 1, maxLength: 998 }),
  reply_to: Type.Array(NoNulString({ minLength: 1, maxLength: 254 }), { maxItems: 50 }),
  subject: NoNulString({ minLength: 1, maxLength: 998 }),
  body: NoNulString({ maxLength: 1_000_000 }),
  template_id: Type.String({ pattern: TEMPLATE_ID_PATTERN }),
  template_version: Type.Integer({ minimum: 1, maximum: 9007199254740991 }),
  tags: Type.Unsafe<Record<string, string>>({
    type: 'object',
    maxProperties: 100,
    propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    additionalProperties: NoNulString({ maxLength: 256 }),
  }),
};
const orNull = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const fields = {
  name: NoNulString({ minLength: 1, maxLength: 200 }),
  from: base.from,
  reply_to: Type.Optional(base.reply_to),
  subject: Type.Optional(base.subject),
  html: Type.Optional(base.body),
  text: Type.Optional(base.body),
  template_id: sent.template_id,
  template_version: sent.template_version,
  audience_id: Type.Optional(id('aud')),
  segment_id: Type.Optional(id('seg')),
  topic_id: Type.Optional(id('top')),
  tags: Type.Optional(base.tags),
};

export const CreateBroadcastBody = Type.Object(fields, { additionalProperties: false });
export type CreateBroadcastBody = Static<typeof CreateBroadcastBody>;

/** A draft's fields, each replaced as given; null takes away an optional one. */
export const PatchBroadcastBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    from: Type.Optional(base.from),
    reply_to: orNull(base.reply_to),
    subject: orNull(base.subject),
    html: orNull(base.body),
    text: orNull(base.body),
    template_id: orNull(base.template_id),
    template_version: orNull(base.template_version),
    audience_id: orNull(id('aud')),
    segment_id: orNull(id('seg')),
    topic_id: orNull(id('top')),
    tags: Type.Optional(base.tags),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchBroadcastBody = Static<typeof PatchBroadcastBody>;

export const SendBroadcastBody = Type.Object(
  { scheduled_at: Type.Optional(Type.String({ format: 'date-time' })) },
  { additionalProperties: false },
);
export type SendBroadcastBody = Static<typeof SendBroadcastBody>;

export const ListBroadcastsQuery = Type.Object(pageQueryFields('bro'), { additionalProperties: false });

/** POST /v1/broadcasts/{id}/preview: the contact it is rendered for. */
export const PreviewBroadcastBody = Type.Object({ contact_id: id('con') }, { additionalProperties: false });
export type PreviewBroadcastBody = Static<typeof PreviewBroadcastBody>;

/** POST /v1/broadcasts/{id}/test: one email of it to `to`, rendered for a contact of the project if named. */
export const TestBroadcastBody = Type.Object(
  { to: NoNulString({ minLength: 1, maxLength: 998 }), contact_id: Type.Optional(id('con')) },
  { additionalProperties: false },
);
export type TestBroadcastBody = Static<typeof TestBroadcastBody>;
