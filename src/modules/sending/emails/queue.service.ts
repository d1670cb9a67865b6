import { apiError, notFound } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { eventsOfEmail, type OutboxEvent } from '../../notifying/events/events.repo.js';
import type { Email } from './email.js';
import { emailStatusCounts, findEmailById } from './emails.repo.js';
import { retryAmbiguous as retry } from './lifecycle.js';
import { queueRowsOfEmail, type QueueRow } from './queue.repo.js';
import { queueStateCounts } from './queue-counts.repo.js';
import { lockForChange, storeChanges } from './store-change.js';

// The outbound queue as an operator sees it: `posthorn queue stats | show | retry` (CONTRACT §3).

/**
 * `posthorn queue retry`: the only way an ambiguous email goes out again
 * (interface §1.9). The operator has checked that the first copy did not
 * arrive; its ambiguous recipients go back to the queue, due now.
 */
export async function retryAmbiguous(deps: { store: Store; clock: Clock }, emailId: string): Promise<Email> {
  return deps.store.tx(async (trx) => {
    // the rows go back to the queue: nobody else may be changing them meanwhile (PostgreSQL)
    await lockForChange(trx, [emailId], { queueRows: true });
    const email = await findEmailById(trx, emailId);
    if (!email) throw notFound(`email ${emailId}`);
    const now = deps.clock.now();
    const back = retry(email, await queueRowsOfEmail(trx, emailId), now);
    if ('refused' in back) throw apiError('conflict', back.refused);
    await storeChanges(trx, [{ ...back, emailMoved: true }], now);
    return back.email;
  });
}

export async function queueStats(store: Store) {
  const [rows, emails] = await Promise.all([queueStateCounts(store.reader), emailStatusCounts(store.reader)]);
  // `deliveries`: the queue rows by state, under the name this output has always had (tools read it)
  return { deliveries: rows, emails };
}

/** What `posthorn queue show` shows: an email with its queue rows and its events. */
export interface QueuedEmail {
  email: Email;
  rows: QueueRow[];
  events: OutboxEvent[];
}

/** `posthorn queue show`: an email with its recipients' details, its queue rows and its events. */
export async function showQueuedEmail(store: Store, emailId: string): Promise<QueuedEmail> {
  const email = await findEmailById(store.reader, emailId);
  if (!email) throw notFound(`email ${emailId}`);
  const [rows, events] = await Promise.all([
    queueRowsOfEmail(store.reader, emailId),
    eventsOfEmail(store.reader, emailId),
  ]);
  return { email, rows, events };
}
