import type { Knex } from 'knex';
import { eventsToFanOut, markFannedOut } from '../events/events.repo.js';
import { newDelivery } from './deliveries.js';
import { insertDeliveries } from './webhook-deliveries.repo.js';
import { activeEndpointsOf } from './webhooks.repo.js';

/**
 * Up to `limit` events of the outbox → one delivery per (event, subscribed
 * active endpoint), due after the schedule's first delay, in the transaction
 * that marks the events fanned out. Answers how many events it took.
 */
export async function fanOutEvents(
  trx: Knex.Transaction,
  now: number,
  firstDelayMs: number,
  limit: number,
): Promise<number> {
  const events = await eventsToFanOut(trx, limit);
  if (!events.length) return 0;
  const endpoints = await activeEndpointsOf(trx, [...new Set(events.map((e) => e.projectId))]);
  const deliveries = events.flatMap((ev) =>
    endpoints
      .filter((ep) => ep.projectId === ev.projectId && ep.events.includes(ev.type))
      .map((ep) => newDelivery(ev, ep.id, now, firstDelayMs)),
  );
  await insertDeliveries(trx, deliveries);
  await markFannedOut(
    trx,
    events.map((e) => e.id),
  );
  return events.length;
}
