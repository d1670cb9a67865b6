import type { Knex } from 'knex';
import { dialectOf, type Db } from '../../../store/db.js';
import { insertRows } from '../../../store/insert-rows.js';
import { prepared } from '../../../store/prepared.js';
import type { EventType } from './event-types.js';

/** One row of the outbox: written in the transaction of the change it reports. */
export interface OutboxEvent {
  id: string;
  projectId: string;
  type: EventType;
  emailId: string | null;
  recipient: string | null;
  simulated: boolean;
  /** the payload's `data` (interface §6) */
  data: Record<string, unknown>;
  createdAt: number;
}

/**
 * An event that no active endpoint of its project subscribes to is stored
 * already fanned out: the dispatcher would only read it back and mark it. An
 * endpoint gets the events emitted while it is active and subscribed to them.
 * `fannedOut`: the caller makes the events' deliveries itself (a test event
 * goes to one endpoint only).
 */
export async function insertEvents(db: Db, events: OutboxEvent[], fannedOut = false): Promise<void> {
  if (!events.length) return;
  const listened = fannedOut
    ? new Map<string, Set<string>>()
    : await subscribedTypes(db, [...new Set(events.map((e) => e.projectId))]);
  await insertRows(
    db,
    'events',
    events.map((e) => ({
      id: e.id,
      project_id: e.projectId,
      type: e.type,
      email_id: e.emailId,
      recipient: e.recipient,
      simulated: e.simulated,
      data: JSON.stringify(e.data),
      fanned_out: !listened.get(e.projectId)?.has(e.type),
      created_at: e.createdAt,
    })),
  );
}

interface EndpointEvents {
  project_id: string;
  events: string;
}

// most transactions emit events of one project: a prepared statement
const subscribedOfOne = prepared<EndpointEvents>(
  (db, projectId, active) =>
    db('webhook_endpoints')
      .select('project_id', 'events')
      .where('project_id', projectId as string)
      .andWhere('active', active as boolean),
  2,
);

/** The event types the active webhook endpoints of each project subscribe to, read in the caller's transaction. */
async function subscribedTypes(db: Db, projectIds: string[]): Promise<Map<string, Set<string>>> {
  const rows =
    projectIds.length === 1
      ? await subscribedOfOne(db, projectIds[0], true)
      : ((await db('webhook_endpoints')
          .select('project_id', 'events')
          .whereIn('project_id', projectIds)
          .andWhere('active', true)) as EndpointEvents[]);
  const out = new Map<string, Set<string>>();
  for (const r of rows) {
    const set = out.get(r.project_id) ?? new Set<string>();
    for (const t of JSON.parse(r.events) as string[]) set.add(t);
    out.set(r.project_id, set);
  }
  return out;
}

const EVENT_COLUMNS = ['id', 'project_id', 'type', 'email_id', 'recipient', 'simulated', 'data', 'created_at'] as const;

interface EventRow {
  id: string;
  project_id: string;
  type: EventType;
  email_id: string | null;
  recipient: string | null;
  simulated: number | boolean;
  data: string;
  created_at: number;
}

const eventFromRow = (r: EventRow): OutboxEvent => ({
  id: r.id,
  projectId: r.project_id,
  type: r.type,
  emailId: r.email_id,
  recipient: r.recipient,
  simulated: Boolean(r.simulated),
  data: JSON.parse(r.data) as Record<string, unknown>,
  createdAt: Number(r.created_at),
});

export async function eventsOfEmail(db: Db, emailId: string): Promise<OutboxEvent[]> {
  return (
    (await db('events').select(EVENT_COLUMNS).where({ email_id: emailId }).orderBy('id', 'asc')) as EventRow[]
  ).map(eventFromRow);
}

/**
 * Events not fanned out yet, oldest first, locked on PostgreSQL so that two
 * dispatchers never fan one out twice (the webhook dispatcher's outbox read).
 */
export async function eventsToFanOut(
  trx: Knex.Transaction,
  limit: number,
): Promise<Array<Pick<OutboxEvent, 'id' | 'projectId' | 'type'>>> {
  // the partial index's own predicate, literally: SQLite uses such an index only then
  const q = trx('events').select('id', 'project_id', 'type').whereRaw('fanned_out = false').orderBy('id').limit(limit);
  if (dialectOf(trx) === 'pg') q.forUpdate().skipLocked();
  const rows = (await q) as Array<{ id: string; project_id: string; type: EventType }>;
  return rows.map((r) => ({ id: r.id, projectId: r.project_id, type: r.type }));
}

export async function markFannedOut(trx: Knex.Transaction, ids: string[]): Promise<void> {
  if (ids.length) await trx('events').whereIn('id', ids).update({ fanned_out: true });
}

/** Events by id, in one query: a batch of claimed webhook deliveries reads its events at once. */
export async function findEventsById(db: Db, ids: string[]): Promise<Map<string, OutboxEvent>> {
  if (!ids.length) return new Map();
  const rows = (await db('events')
    .select(EVENT_COLUMNS)
    .whereIn('id', [...new Set(ids)])) as EventRow[];
  return new Map(rows.map((r) => [r.id, eventFromRow(r)]));
}

/** One event; with `projectId`, only that project's (another project's id is not found). */
export async function findEvent(db: Db, id: string, projectId?: string): Promise<OutboxEvent | null> {
  const q = db('events').select(EVENT_COLUMNS).where({ id });
  if (projectId !== undefined) q.andWhere({ project_id: projectId });
  const row = (await q.first()) as EventRow | undefined;
  return row ? eventFromRow(row) : null;
}
