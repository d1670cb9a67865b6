import { apiError, notFound } from '../../lib/errors.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import { deliveriesOfEmail, queueCounts, saveDelivery } from './deliveries.repo.js';
import { findEmailById, saveEmailState, saveRecipient, type Email } from './emails.repo.js';

/**
 * `posthorn queue retry`: the only way an ambiguous email goes out again
 * (interface §1.9). The operator has checked that the first copy did not
 * arrive; its ambiguous recipients go back to the queue, due now.
 */
export async function retryAmbiguous(deps: { store: Store; clock: Clock }, emailId: string): Promise<Email> {
  return deps.store.tx(async (trx) => {
    const email = await findEmailById(trx, emailId);
    if (!email) throw notFound(`email ${emailId}`);
    const ambiguous = email.recipients.filter((r) => r.status === 'ambiguous');
    if (!ambiguous.length) throw apiError('conflict', `email ${emailId} has no ambiguous recipient (status ${email.status}); only ambiguous mail is retried by hand`);
    const now = deps.clock.now();
    for (const r of ambiguous) await saveRecipient(trx, { ...r, status: 'queued', updatedAt: now });
    const rows = new Set(ambiguous.map((r) => r.deliveryId));
    for (const d of await deliveriesOfEmail(trx, emailId)) {
      if (rows.has(d.id)) await saveDelivery(trx, { ...d, state: 'queued', nextAttemptAt: now, leaseOwner: null, leaseUntil: null, dataStarted: false, updatedAt: now });
    }
    const next: Email = { ...email, status: email.acceptedAt !== null ? 'accepted' : 'queued', statusReason: null, updatedAt: now };
    await saveEmailState(trx, next);
    return (await findEmailById(trx, emailId))!;
  });
}

export async function queueStats(store: Store) {
  const [deliveries, emails] = await Promise.all([
    queueCounts(store.reader),
    store.reader('emails').select('status').count({ n: '*' }).groupBy('status') as unknown as Promise<Array<{ status: string; n: number | string }>>,
  ]);
  return { deliveries, emails: Object.fromEntries(emails.map((r) => [r.status, Number(r.n)])) };
}
