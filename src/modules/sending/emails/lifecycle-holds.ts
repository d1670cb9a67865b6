import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { emailEvent } from './email-events.js';
import type { Email } from './email.js';
import type { QueueRow, QueueWait } from './queue.repo.js';

// Holds of traffic shaping in the email state machine (lifecycle-outcomes.ts): a recipient held
// back because its provider suspended the sender, or only waiting for its turn at the provider's
// rate, waits in the queue without the attempt counting toward outbound.retry_schedule.

/** One recipient's outcome as the retry decision reads it: a deferral with `until` is a hold. */
interface Tried {
  kind: string;
  until?: number;
}

/**
 * When a row whose recipients still wait is tried again: after the retry schedule's wait for a
 * deferral the receiver gave; at the end of a hold of traffic shaping (a suspended provider, a
 * rate) otherwise, and then the attempt does not count toward the schedule, since the message
 * never reached the receiver or was only throttled. `heldUntil`: recipients left without an
 * outcome wait for their turn until then.
 */
export function nextTry(
  row: QueueRow,
  outcomes: Iterable<Tried>,
  ctx: { now: number; retryDelaysMs: readonly number[]; heldUntil?: number },
): { at: number; attempts: number } {
  let held = ctx.heldUntil ?? null;
  let counted = false;
  let deferredByReceiver = false;
  for (const o of outcomes) {
    if (o.kind === 'deferred' && o.until !== undefined) held = held === null ? o.until : Math.min(held, o.until);
    else if (o.kind !== 'suppressed') {
      counted = true;
      deferredByReceiver ||= o.kind === 'deferred';
    }
  }
  const retryAt = ctx.now + (ctx.retryDelaysMs[row.attempts - 1] ?? 0);
  if (held === null) return { at: retryAt, attempts: row.attempts };
  return {
    at: deferredByReceiver ? Math.max(retryAt, held) : held,
    attempts: counted ? row.attempts : Math.max(0, row.attempts - 1),
  };
}

/** Why the row waits, when the MTA holds a recipient back for a reason of its own: the first such deferral. */
export function waitOf(
  outcomes: Iterable<{ kind: string; reply?: string; wait?: QueueWait['kind'] }>,
): QueueWait | null {
  for (const o of outcomes) if (o.kind === 'deferred' && o.wait) return { kind: o.wait, reason: o.reply ?? '' };
  return null;
}

/** email.delivery_delayed (once per recipient): the reply, and when the next try is. */
export function delayedEvent(email: Email, address: string, reply: string, nextAt: number, now: number): OutboxEvent {
  return emailEvent(email, 'email.delivery_delayed', now, address, {
    diagnostic: reply,
    next_attempt_at: new Date(nextAt).toISOString(),
  });
}
