import type { Knex } from 'knex';
import { lockRows } from '../../../store/db.js';
import { contactsById } from '../../audience/contacts/contacts.repo.js';
import { storeContactChange } from '../../audience/contacts/leave-broadcasts.js';
import { topicOfBroadcast } from '../../audience/broadcasts/broadcasts.repo.js';
import type { Email } from '../../sending/emails/email.js';
import { subscriptionsOf, setSubscriptions } from '../../audience/topics/topics.repo.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';

/**
 * The one-click unsubscribe of a broadcast email (docs/broadcasts.md): the
 * contact leaves the broadcast's topic, or all broadcast mail when it has
 * none. No suppression is written: transactional mail to the address, even
 * mail that asks for List-Unsubscribe, is not stopped by it. Returns the
 * contact.updated event, null when there was nothing to change, or
 * undefined when the contact or the broadcast is gone (the caller then
 * suppresses the address as for any other email).
 */
export async function unsubscribeContact(
  trx: Knex.Transaction,
  email: Email,
  now: number,
): Promise<{ events: OutboxEvent[]; topicId: string | null } | null | undefined> {
  if (!email.broadcastId || !email.contactId) return undefined;
  // the one-click POST and the page's button may come at once: one of them records it
  await lockRows(trx, 'contacts', [email.contactId]);
  const topicId = await topicOfBroadcast(trx, email.broadcastId);
  const [contact] = await contactsById(trx, email.projectId, [email.contactId]);
  if (topicId === undefined || !contact) return undefined;
  if (topicId !== null) {
    const subscribed = (await subscriptionsOf(trx, email.projectId, [contact.id])).get(contact.id)?.[topicId];
    // out of the topic already (or the topic is gone, and nothing of it is sent any more)
    if (!subscribed) return null;
    await setSubscriptions(trx, contact.id, { [topicId]: false }, now);
  } else if (contact.unsubscribed) return null;
  return { events: await storeContactChange(trx, contact, topicId === null, now), topicId };
}
