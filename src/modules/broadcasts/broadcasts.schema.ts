import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { NoNulString, pageQueryFields } from '../../lib/schema.js';
import { SendEmailBody } from '../emails/emails.schema.js';
import { TEMPLATE_ID_PATTERN } from '../templates/templates.schema.js';

// Issue 27 (docs/broadcasts.md): the content fields are those of POST /v1/emails, with their limits.
const sent = SendEmailBody.properties;
const id = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$` });
// the same limits without Optional, for PATCH's `null` (take the field away)
const base = {
  reply_to: Type.Array(Type.String({ minLength: 1, maxLength: 254 }), { maxItems: 50 }),
  subject: Type.String({ minLength: 1, maxLength: 998 }),
  body: Type.String({ maxLength: 1_000_000 }),
  template_id: Type.String({ pattern: TEMPLATE_ID_PATTERN }),
  template_version: Type.Integer({ minimum: 1, maximum: 9007199254740991 }),
};
const orNull = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const fields = {
  name: NoNulString({ minLength: 1, maxLength: 200 }),
  from: sent.from,
  reply_to: sent.reply_to,
  subject: sent.subject,
  html: sent.html,
  text: sent.text,
  template_id: sent.template_id,
  template_version: sent.template_version,
  audience_id: Type.Optional(id('aud')),
  segment_id: Type.Optional(id('seg')),
  topic_id: Type.Optional(id('top')),
  tags: sent.tags,
};

export const CreateBroadcastBody = Type.Object(fields, { additionalProperties: false });
export type CreateBroadcastBody = Static<typeof CreateBroadcastBody>;

/** A draft's fields, each replaced as given; null takes away an optional one. */
export const PatchBroadcastBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    from: Type.Optional(sent.from),
    reply_to: orNull(base.reply_to),
    subject: orNull(base.subject),
    html: orNull(base.body),
    text: orNull(base.body),
    template_id: orNull(base.template_id),
    template_version: orNull(base.template_version),
    audience_id: orNull(id('aud')),
    segment_id: orNull(id('seg')),
    topic_id: orNull(id('top')),
    tags: Type.Optional(sent.tags),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchBroadcastBody = Static<typeof PatchBroadcastBody>;

export const SendBroadcastBody = Type.Object({ scheduled_at: Type.Optional(Type.String({ format: 'date-time' })) }, { additionalProperties: false });
export type SendBroadcastBody = Static<typeof SendBroadcastBody>;

export const ListBroadcastsQuery = Type.Object(pageQueryFields('bro'), { additionalProperties: false });
