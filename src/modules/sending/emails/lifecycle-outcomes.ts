import type { Bounce } from '../../receiving/bounces/classify-bounce.js';
import { REASONS } from '../../receiving/bounces/reasons.js';
import type { MailSuppression } from '../suppressions/suppress-after-mail.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { emailEvent } from './email-events.js';
import type { Email, EmailStatus, Recipient, RecipientDetails, RecipientStatus } from './email.js';
import type { QueueRow, QueueWait } from './queue.repo.js';
import { moveEmail, moveRecipient, moveRow } from './lifecycle-moves.js';
import { delayedEvent, nextTry, waitOf } from './lifecycle-holds.js';

/** What happened to one recipient in one attempt. */
export type RecipientOutcome =
  | { kind: 'delivered'; reply: string; mx?: string }
  /**
   * `until`: held back by traffic shaping (a provider's throttle): retried then, the attempt not
   * counted, never failed for it. `wait`: the MTA holds it back for a reason of its own (QueueWait).
   */
  | { kind: 'deferred'; reply: string; mx?: string; until?: number; wait?: QueueWait['kind'] }
  | { kind: 'bounced'; bounce: Bounce; reply: string; mx?: string }
  | { kind: 'ambiguous'; reply: string; mx?: string; stage: AmbiguousStage }
  | { kind: 'complained'; reply: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'suppressed'; reason: string };

/**
 * Where an attempt was when its outcome became unknown: `data` the server's
 * connection ended after the whole message went out, before its reply;
 * `crash` the appliance stopped while the message was being transmitted
 * (found at recovery); `internal` an error of the appliance's own ended the
 * attempt after the body may have started.
 */
export type AmbiguousStage = 'data' | 'crash' | 'internal';

export interface Change {
  email: Email;
  row: QueueRow;
  recipients: Recipient[];
  events: OutboxEvent[];
  /** what may suppress an address (live mail only): complaints, bounces for which mayBounceSuppress */
  suppress: MailSuppression[];
}

export interface ApplyContext {
  now: number;
  /** the wait after each failed attempt (outbound.retry_schedule: [attempts - 1]); simulation passes its own */
  retryDelaysMs: readonly number[];
  /** the other queue rows of the email, as stored */
  otherRows: QueueRow[];
  providerMessageId?: string | null;
  /** status_reason when the email ends failed for a reason of its own (e.g. domain_not_verified) */
  failureReason?: string;
  /** recipients left without an outcome wait for their turn (traffic shaping) until then; the attempt is not counted */
  heldUntil?: number;
}

/**
 * submitting → the outcome of one attempt at one queue row (LIFECYCLE Email
 * and Recipient): new recipient states, the row's next state (queued for a
 * retry, or done), the email's status and the events to write with them.
 */
export function applyOutcomes(
  email: Email,
  row: QueueRow,
  outcomes: Map<string, RecipientOutcome>,
  ctx: ApplyContext,
): Change {
  const { now } = ctx;
  let next: Email = { ...email, updatedAt: now };
  const events: OutboxEvent[] = [];
  const sent = sentEvent(next, outcomes, ctx);
  next = sent.email;
  events.push(...sent.events);
  const result = recipientsAfter(next, row, outcomes, ctx);
  events.push(...result.events);
  const { recipients } = result;

  const waiting = recipients.some((r) => r.queueRowId === row.id && (r.status === 'deferred' || r.status === 'queued'));
  const retry = nextTry(row, outcomes.values(), ctx);
  const nextRow: QueueRow = waiting
    ? {
        ...row,
        state: moveRow(row, 'queued'),
        attempts: retry.attempts,
        nextAttemptAt: retry.at,
        leaseOwner: null,
        leaseUntil: null,
        dataStarted: false,
        wait: waitOf(outcomes.values()),
        updatedAt: now,
      }
    : { ...row, state: moveRow(row, 'done'), leaseOwner: null, leaseUntil: null, wait: null, updatedAt: now };

  const status = emailStatus(next, recipients, [nextRow, ...ctx.otherRows]);
  next = {
    ...next,
    recipients,
    status: moveEmail(email, status),
    statusReason: statusReason(status, recipients, ctx.failureReason),
  };
  if (status === 'failed' && email.status !== 'failed' && !result.perRecipientFailure) {
    events.push(emailEvent(next, 'email.failed', now, null, { reason: next.statusReason }));
  }
  return { email: next, row: nextRow, recipients, events, suppress: result.suppress };
}

/**
 * The first acceptance by a provider is when the email counts as sent
 * (email.sent, once, before the rest), naming a recipient the provider took:
 * never one skipped as suppressed or left for another queue row.
 */
function sentEvent(
  email: Email,
  outcomes: Map<string, RecipientOutcome>,
  ctx: ApplyContext,
): { email: Email; events: OutboxEvent[] } {
  const first = email.recipients.find((r) => {
    const kind = outcomes.get(r.id)?.kind;
    return kind === 'delivered' || kind === 'complained';
  });
  if (!first) return { email, events: [] };
  if (email.acceptedAt === null) {
    const sent = { ...email, acceptedAt: ctx.now, providerMessageId: ctx.providerMessageId ?? email.providerMessageId };
    return { email: sent, events: [emailEvent(sent, 'email.sent', ctx.now, first.address)] };
  }
  if (!email.providerMessageId && ctx.providerMessageId)
    return { email: { ...email, providerMessageId: ctx.providerMessageId }, events: [] };
  return { email, events: [] };
}

function recipientsAfter(email: Email, row: QueueRow, outcomes: Map<string, RecipientOutcome>, ctx: ApplyContext) {
  const { now } = ctx;
  const events: OutboxEvent[] = [];
  const suppress: Change['suppress'] = [];
  const live = email.environment === 'live';
  const retryIn = ctx.retryDelaysMs[row.attempts - 1];
  let perRecipientFailure = false;
  const recipients = email.recipients.map((r): Recipient => {
    const o = outcomes.get(r.id);
    if (!o) return r;
    const set = (
      status: RecipientStatus,
      details: RecipientDetails | null,
      extra: Partial<Recipient> = {},
    ): Recipient => ({ ...r, status: moveRecipient(r, status), details, updatedAt: now, ...extra });
    const mx = 'mx' in o && o.mx ? o.mx : null;
    switch (o.kind) {
      case 'delivered':
        events.push(emailEvent(email, 'email.delivered', now, r.address, answer(o.reply, mx)));
        return set('delivered', answer(o.reply, mx));
      case 'complained':
        events.push(emailEvent(email, 'email.delivered', now, r.address, { reply: o.reply }));
        events.push(emailEvent(email, 'email.complained', now, r.address, { feedback_type: 'abuse' }));
        if (live) suppress.push({ address: r.address, reason: 'complaint' });
        return set('complained', { reply: o.reply });
      case 'bounced':
        events.push(emailEvent(email, 'email.bounced', now, r.address, bounceDetails(o.bounce, null)));
        if (live && mayBounceSuppress(o.bounce))
          suppress.push({ address: r.address, reason: 'bounce', bounce: o.bounce });
        return set('bounced', bouncedRecipient(o.reply, o.bounce, mx));
      case 'deferred': {
        if (o.until !== undefined) {
          if (!r.delayNotified) events.push(delayedEvent(email, r.address, o.reply, o.until, now));
          return set('deferred', answer(o.reply, mx), { delayNotified: true });
        }
        if (retryIn === undefined) {
          perRecipientFailure = true;
          const reason = `gave up after ${row.attempts} attempts: ${o.reply}`;
          events.push(emailEvent(email, 'email.failed', now, r.address, { reason }));
          return set('failed', { reply: o.reply, reason });
        }
        if (!r.delayNotified) events.push(delayedEvent(email, r.address, o.reply, now + retryIn, now));
        return set('deferred', answer(o.reply, mx), { delayNotified: true });
      }
      case 'ambiguous':
        events.push(emailEvent(email, 'email.ambiguous', now, r.address, ambiguousDetails(email.id, o, mx)));
        return set('ambiguous', answer(o.reply, mx));
      case 'failed':
        perRecipientFailure = true;
        events.push(emailEvent(email, 'email.failed', now, r.address, { reason: o.reason }));
        return set('failed', { reason: o.reason });
      case 'suppressed':
        events.push(emailEvent(email, 'email.suppressed', now, r.address, { reason: o.reason }));
        return set('suppressed', null, { queueRowId: null });
    }
  });
  return { recipients, events, suppress, perRecipientFailure };
}

/**
 * Whether a bounce of live mail may suppress its address: a hard one (Permanent) does; a soft one
 * of a lasting reason (a full mailbox, a suspended account) counts toward the project's soft-bounce
 * policy, which suppresses after N in M days (suppress-after-mail.ts); the rest never do.
 */
export function mayBounceSuppress(b: Bounce): boolean {
  return b.bounceType === 'Permanent' || REASONS[b.reason].repeatable;
}

/** email.bounced's details (interface §6; the reason list is docs/bounces.md's). */
export function bounceDetails(b: Bounce, reportingMta: string | null): Record<string, unknown> {
  const d: Record<string, unknown> = {
    bounce_type: b.bounceType,
    reason: b.reason,
    status: b.status,
    diagnostic: b.diagnostic,
  };
  if (reportingMta) d.reporting_mta = reportingMta;
  return d;
}

/**
 * email.ambiguous's details (CONTRACT §7): the host that was being talked to
 * (null when unknown), the stage, the last reply or error, and what to do
 * about it. There is no API route for a retry: only the CLI sends it again.
 */
export function ambiguousDetails(
  emailId: string,
  o: { reply: string; stage: AmbiguousStage },
  host: string | null,
): Record<string, unknown> {
  return {
    host,
    stage: o.stage,
    last_reply: o.reply,
    action: `Whether the server accepted the message is unknown; it will not be sent again by itself. Ask the recipient, then run \`posthorn queue retry ${emailId}\` to send it again.`,
  };
}

export function bouncedRecipient(reply: string, b: Bounce, mx: string | null): RecipientDetails {
  return mx
    ? { reply, bounce_type: b.bounceType, reason: b.reason, status: b.status, mx }
    : { reply, bounce_type: b.bounceType, reason: b.reason, status: b.status };
}

/** A server's answer as a recipient's details (literals: a spread adding `mx` would take V8's slow path). */
const answer = (reply: string, mx: string | null): { reply: string; mx?: string } => (mx ? { reply, mx } : { reply });

/** The email's status from its recipients and queue rows (interface §3). */
export function emailStatus(email: Email, recipients: Recipient[], rows: QueueRow[]): EmailStatus {
  if (rows.some((q) => q.state === 'submitting')) return 'submitting';
  if (email.acceptedAt !== null) return 'accepted';
  if (recipients.some((r) => r.status === 'ambiguous')) return 'ambiguous';
  if (rows.some((q) => q.state === 'queued'))
    return email.status === 'scheduled' && rows.every((q) => q.attempts === 0) ? 'scheduled' : 'queued';
  if (recipients.every((r) => r.status === 'suppressed')) return 'suppressed';
  return 'failed';
}

export function statusReason(status: EmailStatus, recipients: Recipient[], failureReason?: string): string | null {
  switch (status) {
    case 'failed':
      return (
        failureReason ??
        (recipients.every((r) => r.status === 'bounced' || r.status === 'suppressed')
          ? 'every recipient bounced'
          : 'no recipient could be reached')
      );
    case 'ambiguous':
      return 'the receiving server did not answer after the message was transmitted; it is not sent again unless an operator retries it';
    case 'suppressed':
      return 'every recipient is on the suppression list';
    default:
      return null;
  }
}
