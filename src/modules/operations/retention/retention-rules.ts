import type { EmailStatus, RecipientStatus } from '../../sending/emails/email.js';
import type { QueueState } from '../../sending/emails/queue.repo.js';
import type { WebhookDeliveryState } from '../../notifying/webhooks/webhook-deliveries.repo.js';

// What the retention job may delete (no I/O): an email once nothing more can
// happen to it but a late report, with everything that belongs to it; never
// an event the webhook outbox still has to deliver.

/**
 * The email statuses of LIFECYCLE.md after which nothing more is sent:
 * `accepted` (every queue row done, see the recipients), `failed`,
 * `suppressed`, `cancelled`. Not `ambiguous`: the provider may or may not have the
 * message, and only an operator decides (`posthorn queue retry`); the row is
 * the only record of that message, so it is kept, with its events, until the
 * operator has retried it and it settled. Such emails come from crashes
 * during DATA and are few.
 */
export const SETTLED_EMAIL_STATUSES = [
  'accepted',
  'failed',
  'suppressed',
  'cancelled',
] as const satisfies readonly EmailStatus[];
const SETTLED: ReadonlySet<EmailStatus> = new Set(SETTLED_EMAIL_STATUSES);

/**
 * A recipient's final states. `delivered` may still turn into `bounced` or
 * `complained` when a report arrives days later; after the retention period
 * such a report finds no email and is ignored (no suppression is added for
 * it). `queued`, `deferred` and `ambiguous` recipients keep their email.
 */
const FINAL_RECIPIENT: ReadonlySet<RecipientStatus> = new Set<RecipientStatus>([
  'delivered',
  'bounced',
  'complained',
  'failed',
  'suppressed',
  'cancelled',
]);

const DONE_ROW: QueueState = 'done';
const PENDING_DELIVERY: WebhookDeliveryState = 'pending';

/** An email as the job's walk reads it, in the order emails were made (their ids). */
export interface EmailCandidate {
  id: string;
  status: EmailStatus;
  createdAt: number;
  updatedAt: number;
}

export interface EventRef {
  id: string;
  emailId: string | null;
  /** false while the webhook dispatcher has not made its deliveries yet */
  fannedOut: boolean;
  createdAt: number;
}

export interface DeliveryRef {
  id: string;
  eventId: string;
  state: WebhookDeliveryState;
}

/** What may keep a batch's emails: their recipients, queue rows, events and those events' webhook deliveries. */
export interface EmailHolds {
  recipients: Array<{ emailId: string; status: RecipientStatus; updatedAt: number }>;
  queueRows: Array<{ emailId: string; state: QueueState }>;
  events: EventRef[];
  deliveries: DeliveryRef[];
}

/** What one batch deletes. */
export interface Doomed {
  emailIds: string[];
  eventIds: string[];
  deliveryIds: string[];
}

/**
 * Of a page of the walk, the emails that may go if their recipients, queue
 * rows and events agree (doomedEmails): settled, and unchanged themselves
 * since before the cutoff. The walk is over at a page of emails all made
 * since the cutoff (`done`): those after it were made later still. Not at
 * the first one: an email made while the clock ran ahead would stop it there
 * until the cutoff passed its time, and keep everything after it.
 */
export function candidatesOf(page: EmailCandidate[], cutoff: number): { candidates: string[]; done: boolean } {
  const old = page.filter((e) => e.createdAt < cutoff);
  return {
    candidates: old.filter((e) => SETTLED.has(e.status) && e.updatedAt < cutoff).map((e) => e.id),
    done: page.length > 0 && old.length === 0,
  };
}

/**
 * Events that must stay: made since the cutoff (an open or a click of an old
 * email counts as a change of it), not fanned out yet, or with a webhook
 * delivery still pending (a first attempt or a retry to come, or an endpoint
 * paused with deliveries waiting for it).
 */
function heldEvents(events: EventRef[], deliveries: DeliveryRef[], cutoff: number): Set<string> {
  const held = new Set(deliveries.filter((d) => d.state === PENDING_DELIVERY).map((d) => d.eventId));
  for (const e of events) if (!e.fannedOut || e.createdAt >= cutoff) held.add(e.id);
  return held;
}

/**
 * Of the candidates (candidatesOf), those whose every
 * recipient is final and unchanged since before the cutoff, every queue row
 * done, and no event held; with their events and those events' deliveries.
 */
export function doomedEmails(candidates: string[], holds: EmailHolds, cutoff: number): Doomed {
  const kept = new Set<string>();
  for (const r of holds.recipients) if (!FINAL_RECIPIENT.has(r.status) || r.updatedAt >= cutoff) kept.add(r.emailId);
  for (const q of holds.queueRows) if (q.state !== DONE_ROW) kept.add(q.emailId);
  const heldEvent = heldEvents(holds.events, holds.deliveries, cutoff);
  for (const e of holds.events) if (heldEvent.has(e.id) && e.emailId !== null) kept.add(e.emailId);
  const emailIds = candidates.filter((id) => !kept.has(id));
  const going = new Set(emailIds);
  const eventIds = holds.events.filter((e) => e.emailId !== null && going.has(e.emailId)).map((e) => e.id);
  return { emailIds, eventIds, deliveryIds: deliveriesOf(eventIds, holds.deliveries) };
}

/** Events of no email (email.received) made before the cutoff that nothing holds, with their deliveries. */
export function doomedEvents(events: EventRef[], deliveries: DeliveryRef[], cutoff: number): Doomed {
  const held = heldEvents(events, deliveries, cutoff);
  const eventIds = events.filter((e) => !held.has(e.id)).map((e) => e.id);
  return { emailIds: [], eventIds, deliveryIds: deliveriesOf(eventIds, deliveries) };
}

function deliveriesOf(eventIds: string[], deliveries: DeliveryRef[]): string[] {
  const events = new Set(eventIds);
  return deliveries.filter((d) => events.has(d.eventId)).map((d) => d.id);
}
