import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import { insertRows } from '../../../store/insert-rows.js';
import type { Email, Recipient, RecipientDetails, RecipientKind, RecipientStatus } from './email.js';

/** The email_recipients table: its row shape, its mappers, and every query of it. */

interface RecipientRow {
  id: string;
  email_id: string;
  address: string;
  kind: string;
  status: string;
  details: string | null;
  queue_row_id: string | null;
  delay_notified: number | boolean;
  updated_at: number;
}

const RECIPIENT_COLUMNS = [
  'id',
  'email_id',
  'address',
  'kind',
  'status',
  'details',
  'queue_row_id',
  'delay_notified',
  'updated_at',
] as const;

function recipientFromRow(r: RecipientRow): Recipient {
  return {
    id: r.id,
    address: r.address,
    kind: r.kind as RecipientKind,
    status: r.status as RecipientStatus,
    details: r.details ? (JSON.parse(r.details) as RecipientDetails) : null,
    queueRowId: r.queue_row_id,
    delayNotified: Boolean(r.delay_notified),
    updatedAt: Number(r.updated_at),
  };
}

function recipientRow(emailId: string, projectId: string, r: Recipient) {
  return {
    id: r.id,
    email_id: emailId,
    project_id: projectId,
    address: r.address,
    kind: r.kind,
    status: r.status,
    details: r.details ? JSON.stringify(r.details) : null,
    queue_row_id: r.queueRowId,
    delay_notified: r.delayNotified,
    updated_at: r.updatedAt,
  };
}

/** The recipients of new emails (insertEmails, in the same transaction as their email rows). */
export async function insertRecipients(db: Db, emails: Email[]): Promise<void> {
  const recipients = emails.flatMap((e) => e.recipients.map((r) => recipientRow(e.id, e.projectId, r)));
  await insertRows(db, 'email_recipients', recipients);
}

// One email's recipients, as the inbound listener reads them for each report: a prepared statement.
const recipientsOfOne = prepared<RecipientRow>(
  (db, id) =>
    db('email_recipients')
      .select(RECIPIENT_COLUMNS)
      .where('email_id', id as string)
      .orderBy('id', 'asc'),
  1,
);

const recipientsOfMany = prepared<RecipientRow>(
  (db, ids) =>
    db('email_recipients').select(RECIPIENT_COLUMNS).whereIn('email_id', oneOf(db, ids)).orderBy('id', 'asc'),
  1,
);

/** The recipients of each of these emails, in id order (an empty list for an email without any). */
export async function recipientsOf(db: Db, emailIds: string[]): Promise<Map<string, Recipient[]>> {
  const byEmail = new Map<string, Recipient[]>(emailIds.map((id) => [id, []]));
  if (!emailIds.length) return byEmail;
  const rows =
    emailIds.length === 1 ? await recipientsOfOne(db, emailIds[0]) : await recipientsOfMany(db, listParam(emailIds));
  for (const r of rows) byEmail.get(r.email_id)!.push(recipientFromRow(r));
  return byEmail;
}

const updateRecipient = prepared(
  (db, status, details, queueRowId, delayNotified, updatedAt, id) =>
    db('email_recipients')
      .update({
        status,
        details,
        queue_row_id: queueRowId,
        delay_notified: delayNotified,
        updated_at: updatedAt,
      } as Record<string, string>)
      .where('id', id as string),
  6,
);

/** Persist the mutable parts of a recipient after a state change (a prepared statement: the queue's hot path). */
export async function saveRecipient(db: Db, r: Recipient): Promise<void> {
  await updateRecipient(
    db,
    r.status,
    r.details ? JSON.stringify(r.details) : null,
    r.queueRowId,
    r.delayNotified,
    r.updatedAt,
    r.id,
  );
}
