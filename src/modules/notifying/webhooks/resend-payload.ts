import { iso } from '../../../lib/time.js';
import type { EventType } from '../events/event-types.js';
import type { OutboxEvent } from '../events/events.repo.js';

// An event as Resend's webhooks shape it, for endpoints with `payload: "resend"`: `{type,
// created_at, data}`, no id in the body (it is the webhook-id header, as Resend sends it). Pure:
// everything comes from the stored event. docs/webhooks.md has the table this implements.
//
// Our email events are about one recipient (or, for sent, scheduled and failed, the email's first),
// Resend's about one email: `data.to` holds that one recipient, so that `to[0]` is the address a
// bounce or complaint is about. Types with no Resend counterpart keep their name and carry the
// email's fields plus our `details` unchanged.

export interface ResendEventBody {
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
}

type Data = Record<string, unknown>;
type Extra = (details: Data, event: ResendInput) => Data;
export type ResendInput = Pick<OutboxEvent, 'type' | 'createdAt' | 'recipient' | 'data'>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const obj = (v: unknown): Data => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Data) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** The millisecond time at the start of one of our ids (`msg_<10 chars of time><16 random>`), or null. */
export function timeOfId(id: unknown): number | null {
  const m = typeof id === 'string' ? /^[a-z]+_([0-9a-hjkmnp-tv-z]{10})[0-9a-hjkmnp-tv-z]{16}$/.exec(id) : null;
  if (!m) return null;
  let ms = 0;
  for (const c of m[1]) ms = ms * 32 + CROCKFORD.indexOf(c);
  return ms;
}

/**
 * When the email (or received message) of an event was made: its id's time. An id is never
 * younger than its events, save when the process's clock was stepped back after ids were made
 * (ids stay increasing, lib/ids.ts, so they carry the earlier, later time): then the event's.
 */
function madeAt(id: unknown, e: ResendInput): string {
  const t = timeOfId(id);
  return iso(t !== null && t <= e.createdAt ? t : e.createdAt);
}

/** Resend's bounce subType (Amazon SES's words) for our bounce reason. */
const BOUNCE_SUBTYPES: Readonly<Record<string, string>> = {
  user_unknown: 'NoEmail',
  has_moved: 'NoEmail',
  mailbox_full: 'MailboxFull',
  exceed_limit: 'MessageTooLarge',
  spam_detected: 'ContentRejected',
  virus_detected: 'ContentRejected',
  content_error: 'ContentRejected',
};

export function bounceSubType(bounceType: string | null, reason: string | null): string {
  if (bounceType === 'Undetermined') return 'Undetermined';
  return (reason && BOUNCE_SUBTYPES[reason]) || 'General';
}

const none: Extra = () => ({});

/** Our email events that Resend has, and what each adds to the email's fields. */
const EMAIL_EVENTS: Partial<Record<EventType, Extra>> = {
  'email.sent': none,
  'email.scheduled': none,
  'email.delivered': none,
  'email.delivery_delayed': none,
  'email.complained': none,
  'email.opened': none,
  'email.bounced': (d) => ({
    bounce: {
      message: str(d.diagnostic) ?? '',
      subType: bounceSubType(str(d.bounce_type), str(d.reason)),
      type: str(d.bounce_type) ?? 'Undetermined',
    },
  }),
  'email.clicked': (d, e) => ({
    click: {
      link: str(d.url) ?? '',
      timestamp: iso(e.createdAt),
      ...(str(d.user_agent) !== null ? { userAgent: d.user_agent } : {}),
    },
  }),
  'email.failed': (d) => ({ failed: { reason: str(d.reason) ?? 'unknown' } }),
  'email.suppressed': (d) => ({
    suppressed: {
      message: `the address is on this project's suppression list (reason: ${str(d.reason) ?? 'unknown'})`,
      type: 'OnAccountSuppressionList',
    },
  }),
};

/** The fields every Resend email event has, from ours. */
function emailFields(e: ResendInput): Data {
  const d = e.data;
  const recipient = e.recipient ?? str(d.recipient);
  return {
    ...(str(d.broadcast_id) !== null ? { broadcast_id: d.broadcast_id } : {}),
    created_at: madeAt(d.email_id, e),
    email_id: d.email_id,
    from: d.from,
    to: recipient === null ? [] : [recipient],
    subject: d.subject,
    tags: obj(d.tags),
  };
}

/** email.received: Resend's inbound fields; attachments carry no id (the service gives them none). */
function receivedFields(e: ResendInput): Data {
  const d = e.data;
  return {
    email_id: d.inbound_id,
    created_at: madeAt(d.inbound_id, e),
    from: d.from,
    to: list(d.to),
    cc: list(d.cc),
    bcc: [],
    received_for: e.recipient === null ? [] : [e.recipient],
    message_id: d.message_id ?? null,
    subject: d.subject,
    attachments: list(d.attachments).map((a) => {
      const x = obj(a);
      return {
        filename: x.filename ?? null,
        content_type: x.content_type,
        content_disposition: null,
        content_id: null,
        size: x.size,
      };
    }),
  };
}

/** contact.*: Resend's contact fields; our audiences are Resend's segments (and its older audience_id). */
function contactFields(e: ResendInput): Data {
  const d = e.data;
  const audiences = list(d.audiences).filter((a): a is string => typeof a === 'string');
  return {
    id: d.id,
    audience_id: audiences[0] ?? null,
    segment_ids: audiences,
    created_at: d.created_at,
    updated_at: d.updated_at,
    email: d.email,
    first_name: d.first_name ?? null,
    last_name: d.last_name ?? null,
    unsubscribed: d.unsubscribed === true,
  };
}

/** The `data` of the Resend body of an event. */
export function resendData(e: ResendInput): Data {
  if (e.type === 'email.received') return receivedFields(e);
  if (e.type.startsWith('contact.')) return contactFields(e);
  // an event about one of our emails (a gone email's email.unsubscribed has its id only)
  if (str(e.data.email_id) !== null) {
    const extra = EMAIL_EVENTS[e.type];
    const details = obj(e.data.details);
    return extra ? { ...emailFields(e), ...extra(details, e) } : { ...emailFields(e), details };
  }
  // domain.*, broadcast.*: no Resend counterpart, no email: our data as it is
  return e.data;
}

/** The whole body of a delivery to a `payload: "resend"` endpoint. */
export function resendEventBody(e: ResendInput): ResendEventBody {
  return { type: e.type, created_at: iso(e.createdAt), data: resendData(e) };
}
