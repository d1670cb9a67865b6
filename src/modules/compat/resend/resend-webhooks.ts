import { Type, type Static } from '@sinclair/typebox';
import { ApiError, validationError } from '../../../lib/errors.js';
import { StringEnum } from '../../../lib/schema.js';
import { iso } from '../../../lib/time.js';
import { EVENT_TYPES, type EventType } from '../../notifying/events/event-types.js';
import type { Endpoint } from '../../notifying/webhooks/webhooks.repo.js';

// Webhooks as Resend makes and shows them (docs/resend.md): `endpoint` for the URL, `status`
// enabled or disabled, the `signing_secret` shown (Resend's get shows it), and Resend's event names,
// which are ours where we have the event. Pure.

/** Resend's event types (its SDK's WebhookEvent), to tell one we lack from a misspelling. */
export const RESEND_EVENT_TYPES = [
  'email.sent',
  'email.scheduled',
  'email.delivered',
  'email.delivery_delayed',
  'email.complained',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.received',
  'email.failed',
  'email.suppressed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'inbox.created',
  'inbox.updated',
  'inbox.deleted',
  'inbox.thread.created',
  'inbox.thread.folder.updated',
  'inbox.thread.assigned',
  'inbox.thread.unassigned',
  'inbox.thread.labels.updated',
  'inbox.email.received',
  'inbox.email.sent',
  'inbox.draft.created',
  'inbox.draft.updated',
  'inbox.draft.sent',
  'inbox.draft.deleted',
] as const;

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100 });
const Url = Type.String({ minLength: 1, maxLength: 2000 });

/** POST /webhooks: Resend's body, unknown fields ignored as Resend ignores them. */
export const ResendCreateWebhookBody = Type.Object({ endpoint: Url, events: Events }, { additionalProperties: true });

/** PATCH /webhooks/{id} */
export const ResendUpdateWebhookBody = Type.Object(
  {
    endpoint: Type.Optional(Url),
    events: Type.Optional(Events),
    status: Type.Optional(StringEnum(['enabled', 'disabled'] as const)),
  },
  { additionalProperties: true },
);
export type ResendUpdateWebhookBody = Static<typeof ResendUpdateWebhookBody>;

const isOurs = (t: string): t is EventType => (EVENT_TYPES as readonly string[]).includes(t);

/**
 * Our event types for Resend's names, each once: Resend's names are ours where we have the event;
 * one of Resend's we lack, or a name nobody has, is refused naming `events[i]`. Our own names that
 * Resend lacks (email.unsubscribed, …) are taken too.
 */
export function eventsFromResend(names: readonly string[]): EventType[] {
  const out: EventType[] = [];
  names.forEach((name, i) => {
    if (!isOurs(name)) {
      throw validationError(
        `events[${i}]`,
        (RESEND_EVENT_TYPES as readonly string[]).includes(name)
          ? `"${name}" is not available here: this appliance does not emit that event`
          : `unknown event type "${name}"`,
      );
    }
    if (!out.includes(name)) out.push(name);
  });
  return out;
}

/** Our PATCH from Resend's update. */
export function fromResendWebhookPatch(b: ResendUpdateWebhookBody) {
  return {
    url: b.endpoint,
    events: b.events === undefined ? undefined : eventsFromResend(b.events),
    active: b.status === undefined ? undefined : b.status === 'enabled',
  };
}

/** A webhook of GET /webhooks (no secret). */
export function resendListedWebhook(e: Endpoint) {
  return {
    id: e.id,
    endpoint: e.url,
    created_at: iso(e.createdAt),
    status: e.active ? ('enabled' as const) : ('disabled' as const),
    events: e.events,
  };
}

/** GET /webhooks/{id}: with its signing secret, as Resend's get shows it. */
export function resendWebhook(e: Endpoint) {
  return { object: 'webhook' as const, ...resendListedWebhook(e), signing_secret: e.secret };
}

/**
 * Our refusal of the URL, named by Resend's field: the service names it `url`, Resend's body
 * `endpoint` (a validation error's message starts with its field, CONTRACT §4).
 */
export function asEndpointError(e: unknown): unknown {
  if (!(e instanceof ApiError) || e.field !== 'url') return e;
  return validationError('endpoint', e.message.slice('url: '.length));
}
