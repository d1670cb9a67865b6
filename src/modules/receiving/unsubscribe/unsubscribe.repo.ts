import type { Db } from '../../../store/db.js';
import type { Email } from '../../sending/emails/email.js';
import { findEmailById } from '../../sending/emails/emails.repo.js';
import { deleteUnsubscribeLinksBefore, unsubscribeLinkOf } from '../../sending/emails/unsubscribe-links.repo.js';

/** Whom an unsubscribe token names: the recipient of a stored email, or, once retention deleted it, its link row. */
export interface UnsubscribeSubject {
  projectId: string;
  address: string;
  fromDomain: string;
  emailId: string;
  /** null when retention has deleted the email */
  email: Email | null;
}

export async function subjectOf(db: Db, recipientId: string): Promise<UnsubscribeSubject | null> {
  const row = (await db('email_recipients').select('email_id').where({ id: recipientId }).first()) as
    { email_id: string } | undefined;
  const email = row ? await findEmailById(db, row.email_id) : null;
  const recipient = email?.recipients.find((r) => r.id === recipientId);
  if (email && recipient)
    return {
      projectId: email.projectId,
      address: recipient.address,
      fromDomain: email.fromDomain,
      emailId: email.id,
      email,
    };
  const link = await unsubscribeLinkOf(db, recipientId);
  return link
    ? {
        projectId: link.projectId,
        address: link.address,
        fromDomain: link.fromDomain,
        emailId: link.emailId,
        email: null,
      }
    : null;
}

export const pruneUnsubscribeLinks = deleteUnsubscribeLinksBefore;
