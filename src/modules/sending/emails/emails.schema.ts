import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { EMAIL_STATUSES, RECIPIENT_STATUSES } from './email.js';
import { LANGUAGE_PATTERN, TEMPLATE_ID_PATTERN } from '../templates/templates.schema.js';

// interface §4.1 and §8, field by field.
const Address = Type.String({ minLength: 1, maxLength: 254 });
const Recipients = Type.Array(Address, { maxItems: 50 });

export const Attachment = Type.Object(
  {
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    content: Type.Optional(Type.String({ minLength: 1, pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'base64' })),
    path: Type.Optional(
      Type.String({ format: 'uri', maxLength: 2000, description: 'https URL the service downloads' }),
    ),
    content_type: Type.Optional(
      Type.String({ maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$' }),
    ),
    content_id: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$', description: 'shows the image inline as cid:<content_id>' }),
    ),
  },
  { additionalProperties: false },
);
export type Attachment = Static<typeof Attachment>;

export const SendEmailBody = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 998 }),
    to: Type.Optional(Recipients),
    cc: Type.Optional(Recipients),
    bcc: Type.Optional(Recipients),
    reply_to: Type.Optional(Type.Array(Address, { maxItems: 50 })),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 998 })),
    html: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    template_id: Type.Optional(Type.String({ pattern: TEMPLATE_ID_PATTERN })),
    template_version: Type.Optional(Type.Integer({ minimum: 1, maximum: 9007199254740991 })),
    variables: Type.Optional(Type.Object({}, { additionalProperties: true })),
    language: Type.Optional(Type.String({ pattern: LANGUAGE_PATTERN })),
    tags: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        maxProperties: 100,
        propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,64}$' },
        additionalProperties: { type: 'string', maxLength: 256 },
      }),
    ),
    scheduled_at: Type.Optional(Type.String({ format: 'date-time' })),
    attachments: Type.Optional(Type.Array(Attachment, { maxItems: 10 })),
    headers: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        maxProperties: 20,
        propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9-]{0,63}$' },
        additionalProperties: { type: 'string', maxLength: 998 },
      }),
    ),
  },
  { additionalProperties: false },
);
export type SendEmailBody = Static<typeof SendEmailBody>;

/** POST /v1/emails/batch: the emails of POST /v1/emails, in order */
export const SendBatchBody = Type.Array(SendEmailBody, { minItems: 1, maxItems: 100 });
export type SendBatchBody = Static<typeof SendBatchBody>;

/** PATCH /v1/emails/{id} */
export const RescheduleBody = Type.Object(
  { scheduled_at: Type.String({ format: 'date-time' }) },
  { additionalProperties: false },
);
export type RescheduleBody = Static<typeof RescheduleBody>;

/** GET /v1/emails (interface §4.1) */
export const ListEmailsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({ pattern: '^msg_[0-9a-z]{26}$', description: 'next_cursor of the previous page' }),
    ),
    status: Type.Optional(StringEnum(EMAIL_STATUSES)),
    recipient_status: Type.Optional(
      StringEnum(RECIPIENT_STATUSES, {
        description:
          'emails with at least one recipient in this state (bounced, complained, deferred, …), whatever the email’s own status',
      }),
    ),
    to: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
    tag: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.-]{1,64}:',
        maxLength: 321,
        description: 'name:value, e.g. kind:receipt (the email carries this tag with this value)',
      }),
    ),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after this time' })),
    created_before: Type.Optional(Type.String({ format: 'date-time', description: 'created before this time' })),
  },
  { additionalProperties: false },
);
export type ListEmailsQuery = Static<typeof ListEmailsQuery>;
