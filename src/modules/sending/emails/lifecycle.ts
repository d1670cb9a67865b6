import type { Lease } from '../../../store/lease.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { emailEvent } from './email-events.js';
import type { Email, EmailStatus, Recipient, RecipientStatus } from './email.js';
import { emailStatus, statusReason } from './lifecycle-outcomes.js';
import { moveEmail, moveRecipient, moveRow } from './lifecycle-moves.js';
import type { QueueRow } from './queue.repo.js';

/**
 * The state machine of emails, their recipients and their queue rows
 * (LIFECYCLE.md Email, Recipient): every change of their status is made by a
 * function here (lifecycle-accept.ts: the accept; lifecycle-outcomes.ts: the
 * outcome of an attempt), checked against the moves LIFECYCLE.md allows
 * (lifecycle-moves.ts), with the events it emits; the repos store what these
 * return, in the transaction that writes the events. Pure: no I/O.
 */

export {
  applyOutcomes,
  type AmbiguousStage,
  type ApplyContext,
  type Change,
  type RecipientOutcome,
} from './lifecycle-outcomes.js';
export { IllegalTransition } from './lifecycle-moves.js';
export { acceptEmail, type EmailDraft, type RecipientDraft } from './lifecycle-accept.js';

const WAITING: readonly RecipientStatus[] = ['queued', 'deferred'];

/** A row whose turn has come: waiting in the queue and due by `now`. */
export const isDue = (q: QueueRow, now: number) => q.state === 'queued' && q.nextAttemptAt <= now;

/** Whether anything of the email is left in the queue (the MTA is told to look). */
export const isWaiting = (q: QueueRow) => q.state === 'queued';

/** Live mail that the accept stored to go out now (not scheduled), which it may hand to the MTA at once. */
export const goesOutNow = (e: Email) => e.environment === 'live' && e.status === 'queued';

/** The recipients of a row still to be sent to. */
export function waitingOn(email: Email, q: QueueRow): Recipient[] {
  return email.recipients.filter((r) => r.queueRowId === q.id && WAITING.includes(r.status));
}

/**
 * queued → submitting: a claim starts an attempt at the row, held by
 * `lease` (null for an attempt settled in the claiming transaction itself,
 * which nobody else can see meanwhile). The worker's claim, the accept's
 * claim for the worker and the accept's simulation of test mail all start
 * from this.
 */
export function claimRow(q: QueueRow, now: number, lease: Lease | null): QueueRow {
  return {
    ...q,
    state: moveRow(q, 'submitting'),
    attempts: q.attempts + 1,
    dataStarted: false,
    leaseOwner: lease?.owner ?? q.leaseOwner,
    leaseUntil: lease?.until ?? q.leaseUntil,
    updatedAt: now,
  };
}

/** The email of a claimed row; `attempted`: whether an SMTP transaction starts (LIFECYCLE: `attempts` counts them). */
export function claimEmail(email: Email, now: number, attempted = true): Email {
  return {
    ...email,
    status: moveEmail(email, 'submitting'),
    attempts: email.attempts + (attempted ? 1 : 0),
    updatedAt: now,
  };
}

/**
 * A row left submitting by a process that died before the message body
 * started goes back to the queue, due now; the email's status follows its
 * rows. (One whose body may have gone: ambiguousAfterCrash.)
 */
export function requeueOrphan(
  email: Email,
  q: QueueRow,
  others: QueueRow[],
  now: number,
): { email: Email; row: QueueRow } {
  const row: QueueRow = {
    ...q,
    state: moveRow(q, 'queued'),
    leaseOwner: null,
    leaseUntil: null,
    nextAttemptAt: now,
    updatedAt: now,
  };
  const status = emailStatus(email, email.recipients, [row, ...others]);
  return { email: { ...email, status: moveEmail(email, status), updatedAt: now }, row };
}

/** The outcome of a row whose process died after the body may have started: only the receiving server knows. */
export const ambiguousAfterCrash = (email: Email, q: QueueRow) =>
  new Map(
    waitingOn(email, q).map((r) => [
      r.id,
      {
        kind: 'ambiguous' as const,
        stage: 'crash' as const,
        reply:
          'the appliance stopped while the message was being transmitted; whether the server accepted it is unknown',
      },
    ]),
  );

/**
 * PATCH /v1/emails/{id}: scheduled (or queued with a future scheduled_at and
 * no attempt yet) → scheduled at `at` (email.scheduled). Anything on its way
 * or done is refused with the reason.
 */
export function reschedule(
  email: Email,
  rows: QueueRow[],
  at: number,
  now: number,
): { email: Email; rows: QueueRow[]; events: OutboxEvent[] } | { refused: string } {
  const waiting =
    email.status === 'scheduled' ||
    (email.status === 'queued' && email.scheduledAt !== null && email.scheduledAt > now && email.attempts === 0);
  if (!waiting)
    return {
      refused: `email ${email.id} is ${email.status}: only an email still waiting for its scheduled time can be rescheduled`,
    };
  if (rows.some((q) => q.state !== 'queued' || q.attempts > 0))
    return { refused: `email ${email.id} is already on its way` };
  const next: Email = { ...email, status: moveEmail(email, 'scheduled'), scheduledAt: at, updatedAt: now };
  return {
    email: next,
    rows: rows.map((q) => ({ ...q, nextAttemptAt: at, updatedAt: now })),
    events: [emailEvent(next, 'email.scheduled', now, null, { scheduled_at: new Date(at).toISOString() })],
  };
}

/**
 * POST /v1/emails/{id}/cancel: scheduled (or queued and never attempted) → cancelled, its
 * recipients cancelled and its queue rows done, so that nothing of it goes out (email.cancelled).
 * An email the MTA has started on, or that is done, is refused with the reason.
 */
export function cancelEmail(
  email: Email,
  rows: QueueRow[],
  now: number,
): { email: Email; recipients: Recipient[]; rows: QueueRow[]; events: OutboxEvent[] } | { refused: string } {
  if (email.status !== 'scheduled' && email.status !== 'queued')
    return {
      refused: `email ${email.id} is ${email.status}: only an email that is scheduled or queued and not yet attempted can be cancelled`,
    };
  if (email.attempts > 0 || rows.some((q) => q.state !== 'queued' || q.attempts > 0))
    return { refused: `email ${email.id} is already on its way` };
  const recipients = email.recipients
    .filter((r) => WAITING.includes(r.status))
    .map((r): Recipient => ({ ...r, status: moveRecipient(r, 'cancelled'), updatedAt: now }));
  const cancelled = new Map(recipients.map((r) => [r.id, r]));
  const next: Email = {
    ...email,
    status: moveEmail(email, 'cancelled'),
    statusReason: null,
    recipients: email.recipients.map((r) => cancelled.get(r.id) ?? r),
    updatedAt: now,
  };
  return {
    email: next,
    recipients,
    rows: rows.map((q): QueueRow => ({ ...q, state: moveRow(q, 'done'), wait: null, updatedAt: now })),
    events: [emailEvent(next, 'email.cancelled', now, null)],
  };
}

/**
 * `posthorn queue retry` (interface §1.9): an operator who checked that the
 * first copy did not arrive puts the ambiguous recipients back in the queue,
 * due now; the only way ambiguous mail goes out again.
 */
export function retryAmbiguous(
  email: Email,
  rows: QueueRow[],
  now: number,
): { email: Email; recipients: Recipient[]; rows: QueueRow[] } | { refused: string } {
  const ambiguous = email.recipients.filter((r) => r.status === 'ambiguous');
  if (!ambiguous.length)
    return {
      refused: `email ${email.id} has no ambiguous recipient (status ${email.status}); only ambiguous mail is retried by hand`,
    };
  const recipients = ambiguous.map((r): Recipient => ({ ...r, status: moveRecipient(r, 'queued'), updatedAt: now }));
  const retried = new Map(recipients.map((r) => [r.id, r]));
  const all = email.recipients.map((r) => retried.get(r.id) ?? r);
  const carrying = new Set(ambiguous.map((r) => r.queueRowId));
  const back = rows
    .filter((q) => carrying.has(q.id))
    .map((q): QueueRow => ({
      ...q,
      state: moveRow(q, 'queued'),
      nextAttemptAt: now,
      leaseOwner: null,
      leaseUntil: null,
      dataStarted: false,
      updatedAt: now,
    }));
  const status: EmailStatus = email.acceptedAt !== null ? 'accepted' : 'queued';
  return {
    email: {
      ...email,
      recipients: all,
      status: moveEmail(email, status),
      statusReason: statusReason(status, all),
      updatedAt: now,
    },
    recipients,
    rows: back,
  };
}

/**
 * queued → withdrawn: a broadcast's cancel takes back an email the MTA has not started (queued,
 * every queue row waiting and never attempted). Nothing of it went out and it has no
 * event yet, so it leaves no trace: the email is deleted (store-change.ts withdrawEmails).
 */
export function canWithdraw(email: Email, rows: readonly QueueRow[]): boolean {
  return email.status === 'queued' && rows.length > 0 && rows.every((q) => q.state === 'queued' && q.attempts === 0);
}

/**
 * Whether a queue row is kept once an attempt has been applied. A finished
 * row of test mail is dropped, wherever its walk ended (in the accept's
 * transaction or the worker's): nothing reads it again, and not writing it
 * spares a commit a row in four b-trees. An ambiguous recipient keeps it, for
 * `posthorn queue retry` to put back. Live mail keeps its rows: `queue show`
 * tells an operator how each destination went.
 */
export function keepsQueueRow(email: Email, q: QueueRow): boolean {
  return q.state !== 'done' || email.environment !== 'test' || email.recipients.some((r) => r.status === 'ambiguous');
}
