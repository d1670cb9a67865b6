import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import type { StoredAttachment } from './email.js';

/** The email_attachments table: written once with the email, read by the MTA when it builds the message. */

/** The attachments of new emails, by email id, in the order they were given (insertEmails). */
export async function insertAttachments(db: Db, attachments: Map<string, StoredAttachment[]>): Promise<void> {
  for (const [emailId, list] of attachments) {
    if (list.length) {
      await db('email_attachments').insert(
        list.map((a, position) => ({
          email_id: emailId,
          position,
          filename: a.filename,
          content_type: a.contentType,
          content_id: a.contentId,
          content: a.content,
        })),
      );
    }
  }
}

/** How many attachments each of these emails has (0 for none). */
// read in every claim's transaction: a prepared statement
const countsByEmail = prepared<{ email_id: string; n: number | string }>(
  (db, ids) =>
    db('email_attachments')
      .select('email_id')
      .count({ n: '*' })
      .whereIn('email_id', oneOf(db, ids))
      .groupBy('email_id'),
  1,
);

export async function attachmentCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  const counts = new Map(ids.map((id) => [id, 0]));
  if (!ids.length) return counts;
  const rows = await countsByEmail(db, listParam(ids));
  for (const r of rows) counts.set(r.email_id, Number(r.n));
  return counts;
}

export async function attachmentsOf(db: Db, emailId: string): Promise<StoredAttachment[]> {
  const rows = (await db('email_attachments')
    .select('filename', 'content_type', 'content_id', 'content')
    .where({ email_id: emailId })
    .orderBy('position')) as Array<{
    filename: string;
    content_type: string;
    content_id: string | null;
    content: Buffer;
  }>;
  return rows.map((r) => ({
    filename: r.filename,
    contentType: r.content_type,
    contentId: r.content_id,
    content: Buffer.from(r.content),
  }));
}
