import { newId } from '../../../lib/ids.js';
import type { WebhookDelivery } from './webhook-deliveries.repo.js';

// LIFECYCLE "Webhook delivery": one delivery per (event, endpoint), pending
// until an attempt succeeds or the last attempt of webhooks.retry_schedule
// fails. The one place its state moves; no I/O.

/** A new series of attempts of one event to one endpoint (the fan-out, or a replay), due after `delayMs`. */
export function newDelivery(
  event: { id: string; projectId: string },
  endpointId: string,
  now: number,
  delayMs: number,
): WebhookDelivery {
  return {
    id: newId('delivery', now),
    endpointId,
    eventId: event.id,
    projectId: event.projectId,
    state: 'pending',
    attempts: 0,
    nextAttemptAt: now + delayMs,
    lastStatus: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * After one attempt: succeeded on a 2xx in time; otherwise pending until the
 * next delay of the schedule, failed after the last.
 */
export function afterAttempt(
  d: WebhookDelivery,
  result: { status: number | null; error: string | null },
  now: number,
  attemptDelaysMs: readonly number[],
): WebhookDelivery {
  const attempts = d.attempts + 1;
  const ok = result.error === null;
  // the wait before each attempt, the first included: the next one's is at [attempts]
  const nextDelay = attemptDelaysMs[attempts];
  return {
    ...d,
    attempts,
    state: ok ? 'succeeded' : nextDelay === undefined ? 'failed' : 'pending',
    nextAttemptAt: ok || nextDelay === undefined ? d.nextAttemptAt : now + nextDelay,
    lastStatus: result.status,
    lastError: result.error,
    updatedAt: now,
  };
}
