import type { Knex } from 'knex';
import { projectRowsPage, type Db } from '../../../store/db.js';
import type { Broadcast, BroadcastContent, BroadcastStatus } from './broadcast.js';

interface Row {
  id: string;
  project_id: string;
  name: string;
  status: string;
  content: string;
  audience_id: string | null;
  segment_id: string | null;
  topic_id: string | null;
  environment: string | null;
  scheduled_at: number | string | null;
  started_at: number | string | null;
  cursor: string | null;
  recipients: number;
  queued: number;
  suppressed: number;
  skipped: number;
  failed: number;
  withdrawn: number;
  error: string | null;
  finished_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

const num = (v: number | string | null) => (v == null ? null : Number(v));

const fromRow = (r: Row): Broadcast => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  status: r.status as BroadcastStatus,
  content: JSON.parse(r.content) as BroadcastContent,
  audienceId: r.audience_id,
  segmentId: r.segment_id,
  topicId: r.topic_id,
  environment: r.environment as Broadcast['environment'],
  scheduledAt: num(r.scheduled_at),
  startedAt: num(r.started_at),
  cursor: r.cursor,
  recipients: Number(r.recipients),
  queued: Number(r.queued),
  suppressed: Number(r.suppressed),
  skipped: Number(r.skipped),
  failed: Number(r.failed),
  withdrawn: Number(r.withdrawn),
  error: r.error,
  finishedAt: num(r.finished_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toRow = (b: Broadcast): Row => ({
  id: b.id,
  project_id: b.projectId,
  name: b.name,
  status: b.status,
  content: JSON.stringify(b.content),
  audience_id: b.audienceId,
  segment_id: b.segmentId,
  topic_id: b.topicId,
  environment: b.environment,
  scheduled_at: b.scheduledAt,
  started_at: b.startedAt,
  cursor: b.cursor,
  recipients: b.recipients,
  queued: b.queued,
  suppressed: b.suppressed,
  skipped: b.skipped,
  failed: b.failed,
  withdrawn: b.withdrawn,
  error: b.error,
  finished_at: b.finishedAt,
  created_at: b.createdAt,
  updated_at: b.updatedAt,
});

export async function insertBroadcast(db: Db, b: Broadcast): Promise<void> {
  await db('broadcasts').insert(toRow(b));
}

export async function saveBroadcast(db: Db, b: Broadcast): Promise<void> {
  const { id, project_id: _p, created_at: _c, ...rest } = toRow(b);
  await db('broadcasts').where({ id }).update(rest);
}

export async function deleteBroadcast(db: Db, id: string): Promise<void> {
  await db('broadcasts').where({ id }).delete();
}

export async function findBroadcast(db: Db, projectId: string, id: string): Promise<Broadcast | null> {
  const row = (await db('broadcasts').select('*').where({ project_id: projectId, id }).first()) as Row | undefined;
  return row ? fromRow(row) : null;
}

export async function broadcastById(db: Db, id: string): Promise<Broadcast | null> {
  const row = (await db('broadcasts').select('*').where({ id }).first()) as Row | undefined;
  return row ? fromRow(row) : null;
}

export async function pageOfBroadcasts(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Broadcast[]> {
  return (await projectRowsPage<Row>(db, 'broadcasts', projectId, limit, before)).map(fromRow);
}

/** Resend's `before`: the rows just newer than `after`, read upward (oldest first), one more than asked. */
export async function pageOfBroadcastsNewer(db: Db, projectId: string, limit: number, after: string) {
  const rows = (await db('broadcasts')
    .select('*')
    .where({ project_id: projectId })
    .andWhere('id', '>', after)
    .orderBy('id', 'asc')
    .limit(limit + 1)) as Row[];
  return rows.map(fromRow);
}

/** What the fan-out has to do: broadcasts sending, and scheduled ones whose time has come. */
export async function broadcastsToFanOut(db: Db, now: number): Promise<Broadcast[]> {
  const rows = (await db('broadcasts')
    .select('*')
    .where('status', 'sending')
    .orWhere((q) => {
      q.where('status', 'scheduled').andWhere('scheduled_at', '<=', now);
    })
    .orderBy('id')) as Row[];
  return rows.map(fromRow);
}

/** When the next scheduled broadcast is due, to sleep until then. */
export async function nextScheduledAt(db: Db): Promise<number | null> {
  const row = (await db('broadcasts').where('status', 'scheduled').min({ at: 'scheduled_at' }).first()) as
    { at: number | string | null } | undefined;
  return num(row?.at ?? null);
}

/**
 * A fan-out batch's contacts: after `cursor` in id order, created by
 * `startedAt`, of the audience if any. An audience's are read through its
 * membership's primary key (audience_id, contact_id), a range from the
 * cursor on: an IN over the members would read them all at every batch.
 */
export async function contactsAfter(
  db: Db,
  b: Broadcast,
  audienceId: string | null,
  limit: number,
): Promise<FanOutRow[]> {
  if (!audienceId) {
    const q = db('contacts as c')
      .select('c.*')
      .where('c.project_id', b.projectId)
      .andWhere('c.created_at', '<=', b.startedAt);
    if (b.cursor) q.andWhere('c.id', '>', b.cursor);
    return q.orderBy('c.id').limit(limit);
  }
  const q = db('audience_contacts as ac')
    .join('contacts as c', 'c.id', 'ac.contact_id')
    .select('c.*')
    .where('ac.audience_id', audienceId)
    .andWhere('c.created_at', '<=', b.startedAt);
  if (b.cursor) q.andWhere('ac.contact_id', '>', b.cursor);
  return q.orderBy('ac.contact_id').limit(limit);
}

export interface FanOutRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: string;
  unsubscribed: number | boolean;
  created_at: number | string;
  /** not confirmed yet (a signup form's double opt-in) */
  pending?: number | boolean;
}

export interface OutcomeCounts {
  /** recipients by status */
  statuses: Map<string, number>;
  /** emails with at least one event of the type (email.opened, email.clicked, email.unsubscribed) */
  events: Map<string, number>;
}

/** How the broadcasts' emails fared, by broadcast: two grouped queries over its emails. */
export async function outcomeCounts(db: Db, ids: string[]): Promise<Map<string, OutcomeCounts>> {
  const out = new Map(
    ids.map((id) => [id, { statuses: new Map<string, number>(), events: new Map<string, number>() }]),
  );
  if (!ids.length) return out;
  const statuses = await db('emails as e')
    .join('email_recipients as r', 'r.email_id', 'e.id')
    .whereIn('e.broadcast_id', ids)
    .select('e.broadcast_id', 'r.status')
    .count({ n: '*' })
    .groupBy<Array<{ broadcast_id: string; status: string; n: number | string }>>('e.broadcast_id', 'r.status');
  for (const r of statuses) out.get(r.broadcast_id)!.statuses.set(r.status, Number(r.n));
  const events = await db('emails as e')
    .join('events as v', 'v.email_id', 'e.id')
    .whereIn('e.broadcast_id', ids)
    .whereIn('v.type', ['email.opened', 'email.clicked', 'email.unsubscribed'])
    .select('e.broadcast_id', 'v.type')
    .countDistinct({ n: 'e.id' })
    .groupBy<Array<{ broadcast_id: string; type: string; n: number | string }>>('e.broadcast_id', 'v.type');
  for (const r of events) out.get(r.broadcast_id)!.events.set(r.type, Number(r.n));
  return out;
}

/** The broadcast a broadcast email came from, for its unsubscribe link: its topic. */
export async function topicOfBroadcast(db: Db | Knex.Transaction, id: string): Promise<string | null | undefined> {
  const row = (await db('broadcasts').select('topic_id').where({ id }).first()) as
    { topic_id: string | null } | undefined;
  return row === undefined ? undefined : row.topic_id;
}
