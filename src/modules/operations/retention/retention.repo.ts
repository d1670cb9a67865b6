import type { Knex } from 'knex';
import { dialectOf, type Db } from '../../../store/db.js';
import type { EmailStatus, RecipientStatus } from '../../sending/emails/email.js';
import type { QueueState } from '../../sending/emails/queue.repo.js';
import type { WebhookDeliveryState } from '../../notifying/webhooks/webhook-deliveries.repo.js';
import type { DeliveryRef, Doomed, EmailCandidate, EmailHolds, EventRef } from './retention-rules.js';

// The retention job's reads and deletes. Every read walks an index: emails by
// their primary key (ids follow the order they were made in), events of no
// email and received mail by when they were made (migration 0016), oldest
// first; the rows that belong to emails by email_id, webhook deliveries by
// event_id.

/** Rows deleted, by table. */
export type Deleted = Record<
  | 'emails'
  | 'email_recipients'
  | 'outbound_queue'
  | 'email_attachments'
  | 'events'
  | 'webhook_deliveries'
  | 'webhook_attempts'
  | 'inbound_emails',
  number
>;

export const noneDeleted = (): Deleted => ({
  emails: 0,
  email_recipients: 0,
  outbound_queue: 0,
  email_attachments: 0,
  events: 0,
  webhook_deliveries: 0,
  webhook_attempts: 0,
  inbound_emails: 0,
});

/** Where a walk is: the time and id of the last row it read (rows sort by both). */
export interface Position {
  at: number;
  id: string;
}

export const START: Position = { at: -1, id: '' };

/**
 * An id list padded to a power of two (8 at least) by repeating its first id:
 * the statements of every batch then come in a few shapes, which SQLite
 * keeps prepared, instead of one new statement per list length.
 */
function padded(ids: string[]): string[] {
  let size = 8;
  while (size < ids.length) size *= 2;
  return ids.length === size ? ids : [...ids, ...Array<string>(size - ids.length).fill(ids[0])];
}

/**
 * The table read through this index. SQLite has no statistics to choose by
 * (nothing runs ANALYZE), and would rather look events of no email up by
 * events(email_id) and sort them all for each batch: it is told, and fails
 * loudly if the index cannot serve the query. PostgreSQL chooses by its own.
 */
function through(trx: Knex.Transaction, table: string, index: string): Knex.QueryBuilder {
  return dialectOf(trx) === 'pg' ? trx(table) : trx.from(trx.raw('?? indexed by ??', [table, index]));
}

/** On PostgreSQL the rows a batch reads are locked, skipping those another transaction holds (a report being applied). */
const locked = (trx: Knex.Transaction, q: Knex.QueryBuilder): Knex.QueryBuilder =>
  dialectOf(trx) === 'pg' ? q.forUpdate().skipLocked() : q;

/** The next rows made before the cutoff by `column`, after `after`. */
function pageByTime(
  trx: Knex.Transaction,
  q: Knex.QueryBuilder,
  column: string,
  after: Position,
  cutoff: number,
  limit: number,
): Knex.QueryBuilder {
  return locked(
    trx,
    q
      .andWhere(column, '<', cutoff)
      .andWhereRaw(`(${column}, id) > (?, ?)`, [after.at, after.id])
      .orderBy([column, 'id'])
      .limit(limit),
  );
}

/** The next emails after `after` in id order: the order they were made in. */
export async function emailsAfter(trx: Knex.Transaction, after: string, limit: number): Promise<EmailCandidate[]> {
  const q = trx('emails')
    .select('id', 'status', 'created_at', 'updated_at')
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit);
  const rows = (await locked(trx, q)) as Array<{
    id: string;
    status: EmailStatus;
    created_at: number;
    updated_at: number;
  }>;
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  }));
}

/** The next received emails made before the cutoff, oldest first. */
export async function inboundMadeBefore(
  trx: Knex.Transaction,
  after: Position,
  cutoff: number,
  limit: number,
): Promise<Array<{ id: string; createdAt: number }>> {
  const q = through(trx, 'inbound_emails', 'inbound_emails_by_time').select('id', 'created_at');
  const rows = (await pageByTime(trx, q, 'created_at', after, cutoff, limit)) as Array<{
    id: string;
    created_at: number;
  }>;
  return rows.map((r) => ({ id: r.id, createdAt: Number(r.created_at) }));
}

interface EventRow {
  id: string;
  email_id: string | null;
  fanned_out: number | boolean;
  created_at: number;
}

const eventRef = (r: EventRow): EventRef => ({
  id: r.id,
  emailId: r.email_id,
  fannedOut: Boolean(r.fanned_out),
  createdAt: Number(r.created_at),
});

/** The next events that belong to no email (email.received) made before the cutoff, oldest first. */
export async function eventsOfNoEmailBefore(
  trx: Knex.Transaction,
  after: Position,
  cutoff: number,
  limit: number,
): Promise<EventRef[]> {
  // `email_id is null` binds nothing: the partial index's own predicate, which SQLite needs to see to use it
  const q = through(trx, 'events', 'events_without_email')
    .select('id', 'email_id', 'fanned_out', 'created_at')
    .whereNull('email_id');
  return ((await pageByTime(trx, q, 'created_at', after, cutoff, limit)) as EventRow[]).map(eventRef);
}

/** The webhook deliveries of these events. */
export async function deliveriesOfEvents(db: Db, eventIds: string[]): Promise<DeliveryRef[]> {
  if (!eventIds.length) return [];
  const rows = (await db('webhook_deliveries')
    .select('id', 'event_id', 'state')
    .whereIn('event_id', padded(eventIds))) as Array<{ id: string; event_id: string; state: WebhookDeliveryState }>;
  return rows.map((r) => ({ id: r.id, eventId: r.event_id, state: r.state }));
}

/** Everything that may keep these emails: recipients, queue rows, events and their webhook deliveries. */
export async function holdsOf(db: Db, emailIds: string[]): Promise<EmailHolds> {
  if (!emailIds.length) return { recipients: [], queueRows: [], events: [], deliveries: [] };
  const ids = padded(emailIds);
  const recipients = (await db('email_recipients')
    .select('email_id', 'status', 'updated_at')
    .whereIn('email_id', ids)) as Array<{ email_id: string; status: RecipientStatus; updated_at: number }>;
  const queueRows = (await db('outbound_queue').select('email_id', 'state').whereIn('email_id', ids)) as Array<{
    email_id: string;
    state: QueueState;
  }>;
  const events = (
    (await db('events').select('id', 'email_id', 'fanned_out', 'created_at').whereIn('email_id', ids)) as EventRow[]
  ).map(eventRef);
  return {
    recipients: recipients.map((r) => ({ emailId: r.email_id, status: r.status, updatedAt: Number(r.updated_at) })),
    queueRows: queueRows.map((q) => ({ emailId: q.email_id, state: q.state })),
    events,
    deliveries: await deliveriesOfEvents(
      db,
      events.map((e) => e.id),
    ),
  };
}

async function deleteIn(db: Db, table: keyof Deleted, column: string, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  return Number(await db(table).whereIn(column, padded(ids)).delete());
}

/**
 * Deletes the doomed rows, the ones that point at others first: a webhook
 * delivery's attempts, the deliveries, the events, then what belongs to each
 * email and the emails.
 */
export async function deleteDoomed(db: Db, d: Doomed, into: Deleted): Promise<void> {
  into.webhook_attempts += await deleteIn(db, 'webhook_attempts', 'delivery_id', d.deliveryIds);
  into.webhook_deliveries += await deleteIn(db, 'webhook_deliveries', 'id', d.deliveryIds);
  into.events += await deleteIn(db, 'events', 'id', d.eventIds);
  into.email_recipients += await deleteIn(db, 'email_recipients', 'email_id', d.emailIds);
  into.outbound_queue += await deleteIn(db, 'outbound_queue', 'email_id', d.emailIds);
  into.email_attachments += await deleteIn(db, 'email_attachments', 'email_id', d.emailIds);
  into.emails += await deleteIn(db, 'emails', 'id', d.emailIds);
}

export async function deleteInbound(db: Db, ids: string[], into: Deleted): Promise<void> {
  into.inbound_emails += await deleteIn(db, 'inbound_emails', 'id', ids);
}
