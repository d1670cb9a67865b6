import { dialectOf, type Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import { recipientsOf } from './email-recipients.repo.js';
import { EMAIL_COLUMNS, emailFromRow, SUMMARY_COLUMNS, type EmailRow } from './email-rows.repo.js';
import type { Email, EmailStatus, RecipientStatus } from './email.js';
import { idPage, type Page } from '../../../lib/page.js';

/**
 * Reading emails back with their recipients: one by id, a claim's or a
 * report's by ids, the list page, the status counts. What writes them:
 * email-rows.repo.ts (the emails table), email-recipients.repo.ts,
 * email-attachments.repo.ts.
 */

// re-exported for src/mta/claim-batch.ts until it imports them from their own repos

// One email's row, as the inbound listener reads it for each report: a prepared statement.
const summaryById = prepared<EmailRow>(
  (db, id) =>
    db('emails')
      .select(SUMMARY_COLUMNS)
      .where('id', id as string),
  1,
);

/** An email of this project, or null: another project's id is simply not found. */
export async function findEmail(db: Db, projectId: string, id: string): Promise<Email | null> {
  const row = (await db('emails').select(EMAIL_COLUMNS).where({ id, project_id: projectId }).first()) as
    EmailRow | undefined;
  if (!row) return null;
  return emailFromRow(row, (await recipientsOf(db, [id])).get(id)!);
}

export async function findEmailById(db: Db, id: string): Promise<Email | null> {
  const row = (await db('emails').select(EMAIL_COLUMNS).where({ id }).first()) as EmailRow | undefined;
  if (!row) return null;
  return emailFromRow(row, (await recipientsOf(db, [id])).get(id)!);
}

// A claim's and a record's emails: prepared statements, the list of ids one parameter.
const emailsById = prepared<EmailRow>((db, ids) => db('emails').select(EMAIL_COLUMNS).whereIn('id', oneOf(db, ids)), 1);
const summariesById = prepared<EmailRow>(
  (db, ids) => db('emails').select(SUMMARY_COLUMNS).whereIn('id', oneOf(db, ids)),
  1,
);

/** With `withBodies: false` html and text come back null: what recording an outcome needs, read at a fraction of the cost. */
export async function findEmailsById(db: Db, ids: string[], withBodies = true): Promise<Email[]> {
  if (!ids.length) return [];
  const rows =
    ids.length === 1 && !withBodies
      ? await summaryById(db, ids[0])
      : await (withBodies ? emailsById : summariesById)(db, listParam(ids));
  const recipients = await recipientsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => emailFromRow(r, recipients.get(r.id)!));
}

export interface ListFilter {
  limit: number;
  /** ids strictly older than this one */
  before?: string | undefined;
  /** ids strictly newer than this one: the page just above it, still newest first (Resend's `before`) */
  newerThan?: string | undefined;
  status?: EmailStatus | undefined;
  /** at least one recipient in this state */
  recipientStatus?: RecipientStatus | undefined;
  /** bare address, lower-case */
  to?: string | undefined;
  tag?: { name: string; value: string } | undefined;
  /** created_at ≥ this (ms) */
  createdAfter?: number | undefined;
  /** created_at < this (ms) */
  createdBefore?: number | undefined;
}

/** Newest first by id (ids are time-ordered); one row more than asked tells whether a next page exists. */
export async function listEmails(db: Db, projectId: string, f: ListFilter): Promise<Page<Email>> {
  const q = db('emails').select(SUMMARY_COLUMNS).where('project_id', projectId);
  if (f.before) q.andWhere('id', '<', f.before);
  if (f.status) q.andWhere('status', f.status);
  // read newest first through each email's recipients (index email_id) until the page is full: no index
  // by recipient status, which every delivery's update would pay for
  if (f.recipientStatus)
    q.whereExists(
      db('email_recipients as r')
        .select(db.raw('1'))
        .whereRaw('r.email_id = emails.id')
        .andWhere('r.status', f.recipientStatus),
    );
  if (f.to) q.whereIn('id', db('email_recipients').select('email_id').where({ project_id: projectId, address: f.to }));
  if (f.tag) {
    // tags are stored as JSON.stringify gives them: `"name":"value"` appears only as that member
    // (a quote inside a value is escaped); an exact, case-sensitive substring on both databases
    const member = `${JSON.stringify(f.tag.name)}:${JSON.stringify(f.tag.value)}`;
    q.andWhereRaw(dialectOf(db) === 'pg' ? 'strpos(tags, ?) > 0' : 'instr(tags, ?) > 0', [member]);
  }
  if (f.createdAfter !== undefined) q.andWhere('created_at', '>=', f.createdAfter);
  if (f.createdBefore !== undefined) q.andWhere('created_at', '<', f.createdBefore);
  if (f.newerThan) q.andWhere('id', '>', f.newerThan);
  const rows = (await q.orderBy('id', f.newerThan ? 'asc' : 'desc').limit(f.limit + 1)) as EmailRow[];
  // read upward from the cursor, shown newest first; the cursor then names the newest shown
  const { items: page, nextCursor } = f.newerThan
    ? { items: rows.slice(0, f.limit).reverse(), nextCursor: rows.length > f.limit ? rows[f.limit - 1].id : null }
    : idPage(rows, f.limit);
  const recipients = await recipientsOf(
    db,
    page.map((r) => r.id),
  );
  return { items: page.map((r) => emailFromRow(r, recipients.get(r.id)!)), nextCursor };
}

/** How many emails there are in each status (posthorn queue stats). */
export async function emailStatusCounts(db: Db): Promise<Record<string, number>> {
  const rows = await db('emails')
    .select('status')
    .count({ n: '*' })
    .groupBy<Array<{ status: string; n: number | string }>>('status');
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
