import { iso } from '../../../lib/time.js';
import type { Email } from '../../sending/emails/email.js';

// Emails as Resend shows them (GET /emails/{id}, GET /emails): recipients as lists, tags as
// [{name, value}], and `last_event`, the latest thing that happened to the email.

/** Our event types as Resend's `last_event` words. */
const LAST_EVENT: Record<string, string> = {
  'email.scheduled': 'scheduled',
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.delivery_delayed': 'delivery_delayed',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.failed': 'failed',
  'email.suppressed': 'suppressed',
  'email.cancelled': 'canceled',
  // the receiving server may or may not have it: as far as anyone knows, it was sent
  'email.ambiguous': 'sent',
};

/** `last_event` from the email's events (oldest first); an email with none yet is queued. */
export function lastEventOf(eventTypes: readonly string[]): string {
  for (let i = eventTypes.length - 1; i >= 0; i--) {
    const word = LAST_EVENT[eventTypes[i]];
    if (word) return word;
  }
  return 'queued';
}

/** `last_event` from the email's status alone, for a list (one read for the page, not one per email). */
export function lastEventByStatus(e: Email): string {
  switch (e.status) {
    case 'scheduled':
      return 'scheduled';
    case 'queued':
    case 'submitting':
      return e.recipients.some((r) => r.status === 'deferred') ? 'delivery_delayed' : 'queued';
    case 'cancelled':
      return 'canceled';
    case 'failed':
    case 'suppressed':
      return e.status;
    default: {
      for (const s of ['complained', 'bounced', 'deferred', 'delivered'] as const)
        if (e.recipients.some((r) => r.status === s)) return s === 'deferred' ? 'delivery_delayed' : s;
      return 'sent';
    }
  }
}

/** One email of GET /emails. */
export function resendListedEmail(e: Email, lastEvent: string) {
  return {
    id: e.id,
    from: e.from,
    to: e.to,
    cc: e.cc.length ? e.cc : null,
    bcc: e.bcc.length ? e.bcc : null,
    reply_to: e.replyTo,
    subject: e.subject,
    created_at: iso(e.createdAt),
    scheduled_at: iso(e.scheduledAt),
    last_event: lastEvent,
    message_id: e.messageId,
  };
}

/** GET /emails/{id}. */
export function resendEmail(e: Email, lastEvent: string) {
  return {
    object: 'email' as const,
    ...resendListedEmail(e, lastEvent),
    html: e.html,
    text: e.text,
    tags: Object.entries(e.tags).map(([name, value]) => ({ name, value })),
  };
}
