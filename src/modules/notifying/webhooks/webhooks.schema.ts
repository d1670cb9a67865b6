import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { PAYLOAD_FORMATS, SIGNATURE_FORMATS } from './webhook-formats.js';
import { TEST_EVENT_TYPES } from './test-event.js';

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'https URL that must not resolve to a private address',
});
const Events = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true });
const Signature = StringEnum(SIGNATURE_FORMATS, {
  description:
    'how deliveries are signed: `service` (Service-Signature, the default) or `standard` (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)',
});
const Payload = StringEnum(PAYLOAD_FORMATS, {
  description:
    "the body of deliveries: `service` (the service's event, the default) or `resend` (Resend's event shape)",
});

/** CONTRACT §5 */
export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Type.Optional(Events),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    signature: Type.Optional(Signature),
    payload: Type.Optional(Payload),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    active: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    signature: Type.Optional(Signature),
    payload: Type.Optional(Payload),
  },
  { additionalProperties: false },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

/** POST /v1/webhooks/listen (`posthorn listen`): only the events; the url is the stream's. */
export const ListenBody = Type.Object({ events: Type.Optional(Events) }, { additionalProperties: false });
export type ListenBody = Static<typeof ListenBody>;

export const ReplayBody = Type.Object(
  { event_id: Type.String({ pattern: '^evt_[0-9a-z]{26}$' }) },
  { additionalProperties: false },
);
export type ReplayBody = Static<typeof ReplayBody>;

export const TestEventBody = Type.Object(
  {
    type: StringEnum(TEST_EVENT_TYPES, {
      description: 'the email event to simulate: sample data about no stored email, `simulated: true`',
    }),
  },
  { additionalProperties: false },
);
export type TestEventBody = Static<typeof TestEventBody>;

export const DeliveryLogQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ pattern: '^whd_[0-9a-z]{26}$' })),
  },
  { additionalProperties: false },
);
export type DeliveryLogQuery = Static<typeof DeliveryLogQuery>;
