import type { Db } from '../../../store/db.js';
import { insertRows } from '../../../store/insert-rows.js';
import type { Email } from './email.js';
import { wantsAutoUnsubscribe } from './list-unsubscribe.js';

/** Whom an unsubscribe token names, kept beyond the email's retention (migration 0022). */
export interface UnsubscribeLink {
  recipientId: string;
  projectId: string;
  emailId: string;
  address: string;
  fromDomain: string;
}

/** How long a link keeps working after its email was accepted. */
export const UNSUBSCRIBE_LINK_DAYS = 400;

/** The links of the accepted live emails that ask for one-click unsubscribe, in the accept's transaction. */
export async function insertUnsubscribeLinks(db: Db, emails: Email[]): Promise<void> {
  const rows = emails
    .filter((e) => e.environment === 'live' && wantsAutoUnsubscribe(e.headers))
    .flatMap((e) =>
      e.recipients
        .filter((r) => r.status !== 'suppressed')
        .map((r) => ({
          recipient_id: r.id,
          project_id: e.projectId,
          email_id: e.id,
          address: r.address,
          from_domain: e.fromDomain,
          created_at: e.createdAt,
        })),
    );
  if (rows.length) await insertRows(db, 'unsubscribe_links', rows);
}

export async function unsubscribeLinkOf(db: Db, recipientId: string): Promise<UnsubscribeLink | null> {
  const r = (await db('unsubscribe_links')
    .select('recipient_id', 'project_id', 'email_id', 'address', 'from_domain')
    .where({ recipient_id: recipientId })
    .first()) as
    { recipient_id: string; project_id: string; email_id: string; address: string; from_domain: string } | undefined;
  return r
    ? {
        recipientId: r.recipient_id,
        projectId: r.project_id,
        emailId: r.email_id,
        address: r.address,
        fromDomain: r.from_domain,
      }
    : null;
}

/** Deletes up to `limit` links made before `before`; returns how many. */
export async function deleteUnsubscribeLinksBefore(db: Db, before: number, limit: number): Promise<number> {
  const ids = (await db('unsubscribe_links')
    .select('recipient_id')
    .where('created_at', '<', before)
    .limit(limit)) as Array<{ recipient_id: string }>;
  return ids.length
    ? db('unsubscribe_links')
        .whereIn(
          'recipient_id',
          ids.map((r) => r.recipient_id),
        )
        .delete()
    : 0;
}
