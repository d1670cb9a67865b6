import type { Knex } from 'knex';
import { lockRows } from '../../store/db.js';
import { contactsById, updateContact, type Contact } from '../contacts/contacts.repo.js';
import { contactEvent, presented } from '../contacts/contacts.service.js';
import { topicOfBroadcast } from '../broadcasts/broadcasts.repo.js';
import type { Email } from '../emails/email.js';
import { subscriptionsOf, setSubscriptions } from '../topics/topics.repo.js';
import type { OutboxEvent } from '../events/events.repo.js';
import { suppressFromMail } from '../suppressions/suppressions.repo.js';

/**
 * The one-click unsubscribe of a broadcast email (docs/broadcasts.md): the
 * contact leaves the broadcast's topic, or all broadcast mail when it has
 * none. No suppression is written: transactional mail to the address, even
 * mail that asks for List-Unsubscribe, is not stopped by it. Returns the
 * contact.updated event, null when there was nothing to change, or
 * undefined when the contact or the broadcast is gone (the caller then
 * suppresses the address as for any other email).
 */
export async function unsubscribeContact(trx: Knex.Transaction, email: Email, now: number): Promise<{ events: OutboxEvent[]; topicId: string | null } | null | undefined> {
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
  return { events: await changed(trx, contact, topicId === null, now), topicId };
}

/** The contact as changed (out of all broadcast mail with `leaveAll`), stored, and its contact.updated. */
async function changed(trx: Knex.Transaction, contact: Contact, leaveAll: boolean, now: number): Promise<OutboxEvent[]> {
  if (leaveAll) contact.unsubscribed = true;
  contact.updatedAt = now;
  await updateContact(trx, contact);
  const [shown] = await presented(trx, contact.projectId, [contact]);
  return [contactEvent('contact.updated', shown!, contact.projectId, now)];
}

/**
 * What a bounce or complaint reported about a live email does to its address:
 * a suppression, but for a complaint about a broadcast email, which
 * unsubscribes the contact from all broadcast mail instead (issue 27: a
 * complaint about a newsletter must not stop the person's receipts).
 * Returns the events to store with the change.
 */
export async function suppressAfterMail(trx: Knex.Transaction, email: Email, s: { address: string; reason: 'bounce' | 'complaint' }, now: number): Promise<OutboxEvent[]> {
  if (s.reason === 'complaint' && email.broadcastId) {
    await lockRows(trx, 'contacts', email.contactId ? [email.contactId] : []);
    const [contact] = email.contactId ? await contactsById(trx, email.projectId, [email.contactId]) : [];
    // a contact deleted since gets no broadcast any more: still no suppression, which would stop its receipts
    return !contact || contact.unsubscribed ? [] : changed(trx, contact, true, now);
  }
  await suppressFromMail(trx, { projectId: email.projectId, address: s.address, reason: s.reason, emailId: email.id, createdAt: now });
  return [];
}
