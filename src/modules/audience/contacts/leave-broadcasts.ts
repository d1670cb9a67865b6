import type { Knex } from 'knex';
import { lockRows } from '../../../store/db.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { contactsById, updateContact, type Contact } from './contacts.repo.js';
import { contactEvent, presented } from './contacts.service.js';

/**
 * The contact side of a complaint about a broadcast email: the contact leaves all broadcast mail
 * (a complaint about a newsletter must not stop the person's receipts, so no suppression is
 * written). A contact deleted since, or out of broadcast mail already, changes nothing.
 */
export async function leaveBroadcastMail(
  trx: Knex.Transaction,
  email: { projectId: string; contactId: string | null },
  now: number,
): Promise<OutboxEvent[]> {
  await lockRows(trx, 'contacts', email.contactId ? [email.contactId] : []);
  const [contact] = email.contactId ? await contactsById(trx, email.projectId, [email.contactId]) : [];
  return !contact || contact.unsubscribed ? [] : storeContactChange(trx, contact, true, now);
}

/** The contact as changed (out of all broadcast mail with `leaveAll`), stored, and its contact.updated. */
export async function storeContactChange(
  trx: Knex.Transaction,
  contact: Contact,
  leaveAll: boolean,
  now: number,
): Promise<OutboxEvent[]> {
  if (leaveAll) contact.unsubscribed = true;
  contact.updatedAt = now;
  await updateContact(trx, contact);
  const [shown] = await presented(trx, contact.projectId, [contact]);
  return [contactEvent('contact.updated', shown, contact.projectId, now)];
}
