import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';

const ReturnPath = Type.String({
  pattern: '^[a-z0-9]([a-z0-9-]{0,28}[a-z0-9])?$',
  description: 'subdomain used as the envelope sender (MAIL FROM); default send',
});
const ListUnsubscribe = Type.Boolean({
  description:
    'every send from the domain asks for one-click unsubscribe, as the header List-Unsubscribe: <auto> does (docs/unsubscribe.md)',
});
const Tls = StringEnum(['opportunistic', 'enforced'] as const, { description: 'enforced: only deliver over TLS' });

/** POST /v1/domains (interface §4.2): no field is marked required; domain (or name) is needed in practice. */
export const CreateDomainBody = Type.Object(
  {
    domain: Type.Optional(Type.String({ maxLength: 253 })),
    name: Type.Optional(Type.String({ maxLength: 253 })),
    region: Type.Optional(Type.String({ maxLength: 40 })),
    open_tracking: Type.Optional(Type.Boolean()),
    click_tracking: Type.Optional(Type.Boolean()),
    list_unsubscribe: Type.Optional(ListUnsubscribe),
    custom_return_path: Type.Optional(ReturnPath),
    tls: Type.Optional(Tls),
  },
  { additionalProperties: false },
);
export type CreateDomainBody = Static<typeof CreateDomainBody>;

/** PATCH /v1/domains/{id}: both spellings of the tracking flags are accepted. */
export const UpdateDomainBody = Type.Object(
  {
    track_opens: Type.Optional(Type.Boolean()),
    track_clicks: Type.Optional(Type.Boolean()),
    open_tracking: Type.Optional(Type.Boolean()),
    click_tracking: Type.Optional(Type.Boolean()),
    tls: Type.Optional(Tls),
    custom_return_path: Type.Optional(ReturnPath),
    list_unsubscribe: Type.Optional(ListUnsubscribe),
  },
  { additionalProperties: false },
);
export type UpdateDomainBody = Static<typeof UpdateDomainBody>;

export const InsightsQuery = Type.Object(
  { days: Type.Integer({ minimum: 1, maximum: 90, default: 30 }) },
  { additionalProperties: false },
);
export type InsightsQuery = Static<typeof InsightsQuery>;
