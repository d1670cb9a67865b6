import type { OutboxEvent } from '../events/events.repo.js';
import { emailEvent } from '../events/emit.js';
import type { Delivery } from './deliveries.repo.js';
import type { Email, EmailStatus, Recipient, RecipientDetails } from './emails.repo.js';

/** What happened to one recipient in one attempt. */
export type RecipientOutcome =
  | { kind: 'delivered'; reply: string; mx?: string }
  | { kind: 'deferred'; reply: string; mx?: string }
  | { kind: 'bounced'; bounceType: 'Permanent' | 'Transient'; reply: string; mx?: string }
  | { kind: 'ambiguous'; reply: string; mx?: string }
  | { kind: 'complained'; reply: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'suppressed'; reason: string };

export interface Change {
  email: Email;
  delivery: Delivery;
  recipients: Recipient[];
  events: OutboxEvent[];
  /** addresses to add to the project's suppression list (live hard bounces and complaints only) */
  suppress: Array<{ address: string; reason: 'bounce' | 'complaint' }>;
}

export interface ApplyContext {
  now: number;
  /** delays before each retry (outbound.retry_schedule); simulation passes its own */
  retryScheduleMs: readonly number[];
  /** the other queue rows of the email, as stored */
  otherDeliveries: Delivery[];
  providerMessageId?: string | null;
  /** status_reason when the email ends failed for a reason of its own (e.g. domain_not_verified) */
  failureReason?: string;
}

/**
 * LIFECYCLE Email and Recipient as one pure function: the outcomes of one
 * attempt of one queue row → new recipient states, the row's next state,
 * the email's status and the events to write with them.
 */
export function applyOutcomes(email: Email, delivery: Delivery, outcomes: Map<string, RecipientOutcome>, ctx: ApplyContext): Change {
  const { now } = ctx;
  const events: OutboxEvent[] = [];
  const suppress: Change['suppress'] = [];
  const live = email.environment === 'live';
  const retryIn = ctx.retryScheduleMs[delivery.attempts - 1];
  let next: Email = { ...email, updatedAt: now };
  let perRecipientFailure = false;

  // The first acceptance by a provider is when the email counts as sent (email.sent, once, before the rest),
  // naming a recipient the provider took: never one skipped as suppressed or left for another queue row.
  const firstAccepted = email.recipients.find((r) => {
    const kind = outcomes.get(r.id)?.kind;
    return kind === 'delivered' || kind === 'complained';
  });
  const accepted = firstAccepted !== undefined;
  if (accepted && next.acceptedAt === null) {
    next = { ...next, acceptedAt: now, providerMessageId: ctx.providerMessageId ?? next.providerMessageId };
    events.push(emailEvent(next, 'email.sent', now, firstAccepted.address));
  } else if (accepted && !next.providerMessageId && ctx.providerMessageId) {
    next = { ...next, providerMessageId: ctx.providerMessageId };
  }

  const recipients = email.recipients.map((r): Recipient => {
    const o = outcomes.get(r.id);
    if (!o) return r;
    const set = (status: Recipient['status'], details: RecipientDetails | null, extra: Partial<Recipient> = {}): Recipient => ({ ...r, status, details, updatedAt: now, ...extra });
    switch (o.kind) {
      case 'delivered':
        events.push(emailEvent(next, 'email.delivered', now, r.address, { reply: o.reply, ...(o.mx ? { mx: o.mx } : {}) }));
        return set('delivered', { reply: o.reply, ...(o.mx ? { mx: o.mx } : {}) });
      case 'complained':
        events.push(emailEvent(next, 'email.delivered', now, r.address, { reply: o.reply }));
        events.push(emailEvent(next, 'email.complained', now, r.address, { feedback_type: 'abuse' }));
        if (live) suppress.push({ address: r.address, reason: 'complaint' });
        return set('complained', { reply: o.reply });
      case 'bounced':
        events.push(emailEvent(next, 'email.bounced', now, r.address, { bounce_type: o.bounceType, diagnostic: o.reply }));
        if (live && o.bounceType === 'Permanent') suppress.push({ address: r.address, reason: 'bounce' });
        return set('bounced', { reply: o.reply, bounce_type: o.bounceType, ...(o.mx ? { mx: o.mx } : {}) });
      case 'deferred': {
        if (retryIn === undefined) {
          perRecipientFailure = true;
          const reason = `gave up after ${delivery.attempts} attempts: ${o.reply}`;
          events.push(emailEvent(next, 'email.failed', now, r.address, { reason }));
          return set('failed', { reply: o.reply, reason });
        }
        if (!r.delayNotified) events.push(emailEvent(next, 'email.delivery_delayed', now, r.address, { diagnostic: o.reply, next_attempt_at: new Date(now + retryIn).toISOString() }));
        return set('deferred', { reply: o.reply, ...(o.mx ? { mx: o.mx } : {}) }, { delayNotified: true });
      }
      case 'ambiguous':
        return set('ambiguous', { reply: o.reply, ...(o.mx ? { mx: o.mx } : {}) });
      case 'failed':
        perRecipientFailure = true;
        events.push(emailEvent(next, 'email.failed', now, r.address, { reason: o.reason }));
        return set('failed', { reason: o.reason });
      case 'suppressed':
        events.push(emailEvent(next, 'email.suppressed', now, r.address, { reason: o.reason }));
        return set('suppressed', null, { deliveryId: null });
    }
  });

  const waiting = recipients.some((r) => r.deliveryId === delivery.id && (r.status === 'deferred' || r.status === 'queued'));
  const nextDelivery: Delivery = waiting
    ? { ...delivery, state: 'queued', nextAttemptAt: now + (retryIn ?? 0), leaseOwner: null, leaseUntil: null, dataStarted: false, updatedAt: now }
    : { ...delivery, state: 'done', leaseOwner: null, leaseUntil: null, updatedAt: now };

  const status = emailStatus(next, recipients, [nextDelivery, ...ctx.otherDeliveries]);
  next = { ...next, recipients, status, statusReason: statusReason(status, recipients, ctx.failureReason) };
  if (status === 'failed' && email.status !== 'failed' && !perRecipientFailure) {
    events.push(emailEvent(next, 'email.failed', now, null, { reason: next.statusReason }));
  }
  return { email: next, delivery: nextDelivery, recipients, events, suppress };
}

/** The lease a claim writes on a queue row: who holds it, until when. */
export interface Lease {
  owner: string;
  until: number;
}

/**
 * A queue row and its email as a claim leaves them: submitting, one more
 * attempt, no data started, held by `lease` (null for an attempt settled in
 * the claiming transaction itself, which nobody else can see meanwhile).
 * The worker's claim, the accept's claim for the worker and the accept's
 * simulation of test mail all start from this.
 */
export function claimedDelivery(d: Delivery, now: number, lease: Lease | null): Delivery {
  return { ...d, state: 'submitting', attempts: d.attempts + 1, dataStarted: false, leaseOwner: lease?.owner ?? d.leaseOwner, leaseUntil: lease?.until ?? d.leaseUntil, updatedAt: now };
}

/** `attempted`: whether the claim starts an attempt (LIFECYCLE: `attempts` counts the transactions started). */
export function claimedEmail(email: Email, now: number, attempted = true): Email {
  return { ...email, status: 'submitting', attempts: email.attempts + (attempted ? 1 : 0), updatedAt: now };
}

/**
 * Whether a queue row is kept once an attempt has been applied. A finished
 * row of test mail is dropped, wherever its walk ended (in the accept's
 * transaction or the worker's): nothing reads it again, and not writing it
 * spares a commit a row in four b-trees. An ambiguous recipient keeps it, for
 * `posthorn queue retry` to put back. Live mail keeps its rows: `queue show`
 * tells an operator how each destination went.
 */
export function keepsQueueRow(email: Email, delivery: Delivery): boolean {
  return delivery.state !== 'done' || email.environment !== 'test' || email.recipients.some((r) => r.status === 'ambiguous');
}

/** The email's status from its recipients and queue rows (interface §3). */
export function emailStatus(email: Email, recipients: Recipient[], deliveries: Delivery[]): EmailStatus {
  if (deliveries.some((d) => d.state === 'submitting')) return 'submitting';
  if (email.acceptedAt !== null) return 'accepted';
  if (recipients.some((r) => r.status === 'ambiguous')) return 'ambiguous';
  if (deliveries.some((d) => d.state === 'queued')) return email.status === 'scheduled' && deliveries.every((d) => d.attempts === 0) ? 'scheduled' : 'queued';
  if (recipients.every((r) => r.status === 'suppressed')) return 'suppressed';
  return 'failed';
}

function statusReason(status: EmailStatus, recipients: Recipient[], failureReason?: string): string | null {
  switch (status) {
    case 'failed':
      return failureReason ?? (recipients.every((r) => r.status === 'bounced' || r.status === 'suppressed') ? 'every recipient bounced' : 'no recipient could be reached');
    case 'ambiguous':
      return 'the receiving server did not answer after the message was transmitted; it is not sent again unless an operator retries it';
    case 'suppressed':
      return 'every recipient is on the suppression list';
    default:
      return null;
  }
}
