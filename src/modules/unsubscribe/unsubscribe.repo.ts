import type { Db } from '../../store/db.js';
import type { Email, Recipient } from '../emails/email.js';
import { findEmailById } from '../emails/emails.repo.js';

/** The email and recipient an unsubscribe token names (retention may have deleted them since). */
export async function emailOfRecipient(db: Db, recipientId: string): Promise<{ email: Email; recipient: Recipient } | null> {
  const row = (await db('email_recipients').select('email_id').where({ id: recipientId }).first()) as { email_id: string } | undefined;
  const email = row ? await findEmailById(db, row.email_id) : null;
  const recipient = email?.recipients.find((r) => r.id === recipientId);
  return email && recipient ? { email, recipient } : null;
}
