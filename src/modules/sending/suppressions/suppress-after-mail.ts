import type { Knex } from 'knex';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { leaveBroadcastMail } from '../../audience/contacts/leave-broadcasts.js';
import { suppressFromMail } from './suppressions.repo.js';

/** The email a bounce or complaint was about (an Email; only this much is read). */
export interface ReportedMail {
  id: string;
  projectId: string;
  broadcastId: string | null;
  contactId: string | null;
}

/**
 * Where a hard bounce or a complaint suppresses the address. The state machine decides that a
 * reported failure suppresses (lifecycle-outcomes.ts: a Permanent bounce, a complaint); this
 * writes it, in the transaction of the change: a suppression of the address, but for a complaint
 * about a broadcast email, which takes the contact out of broadcast mail instead (a complaint
 * about a newsletter must not stop the person's receipts). Returns the events to store with it.
 */
export async function suppressAfterMail(
  trx: Knex.Transaction,
  email: ReportedMail,
  s: { address: string; reason: 'bounce' | 'complaint' },
  now: number,
): Promise<OutboxEvent[]> {
  if (s.reason === 'complaint' && email.broadcastId) return leaveBroadcastMail(trx, email, now);
  await suppressFromMail(trx, {
    projectId: email.projectId,
    address: s.address,
    reason: s.reason,
    emailId: email.id,
    createdAt: now,
  });
  return [];
}
