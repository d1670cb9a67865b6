import type { Knex } from 'knex';
import type { Db } from '../../../store/db.js';
import { insertRows } from '../../../store/insert-rows.js';
import { updateRows } from '../../../store/update-rows.js';
import { claimRows, dropLeases, releaseLeases, type Lease } from '../../../store/lease.js';

// The webhook deliveries (one per event and endpoint, LIFECYCLE "Webhook delivery") and their
// attempts; the endpoints they go to are in webhooks.repo.ts.

export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed';

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  projectId: string;
  state: WebhookDeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** the first KiB of the answer's body (signed-post.ts answerExcerpt); null without one */
  responseBody: string | null;
  createdAt: number;
}

/** The columns of a delivery's row (webhook-log.repo.ts reads them too). */
export const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event_id',
  'project_id',
  'state',
  'attempts',
  'next_attempt_at',
  'last_status',
  'last_error',
  'created_at',
  'updated_at',
] as const;

export type DeliveryRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  project_id: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
};

export const deliveryFromRow = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  projectId: r.project_id,
  state: r.state as WebhookDeliveryState,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  lastStatus: r.last_status == null ? null : Number(r.last_status),
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** A delivery's state as its row holds it, unleased: at creation and after an attempt. */
function stateColumns(d: WebhookDelivery) {
  return {
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt,
    lease_owner: null,
    lease_until: null,
    last_status: d.lastStatus,
    last_error: d.lastError,
    updated_at: d.updatedAt,
  };
}

/**
 * A fan-out of 500 events to ten endpoints is 5,000 rows: insertRows sends them in chunks of at most
 * 64 (knex's SQLite insert of 1,000 rows was one compound SELECT past SQLite's 500 terms, refused).
 */
export async function insertDeliveries(db: Db, list: WebhookDelivery[]): Promise<void> {
  await insertRows(
    db,
    'webhook_deliveries',
    list.map((d) => ({
      id: d.id,
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      project_id: d.projectId,
      ...stateColumns(d),
      created_at: d.createdAt,
    })),
  );
}

/** Which due deliveries a claim takes: one endpoint's, or any endpoint's but some. */
export interface ClaimScope {
  now: number;
  limit: number;
  lease: Lease;
  /** only this endpoint's (index endpoint_id, state, next_attempt_at: its backlog alone is read) */
  endpointId?: string;
  /** none of these endpoints' */
  skipEndpoints?: string[];
  /** none about these emails (their earlier events are on their way to the endpoint) */
  skipEmails?: string[];
  /** of the due deliveries found, those to take (in-flight.ts); the others are left as they are */
  pick?: (found: ClaimedDelivery[]) => ClaimedDelivery[];
}

export type ClaimedDelivery = WebhookDelivery & { emailId: string | null };

/**
 * Claim due deliveries of active endpoints, oldest first (ties in creation
 * order), each with the email its event is about (null for an event about no
 * email). A delivery whose lease ran out (its process died mid-request) is
 * due again: at-least-once.
 */
export async function claimDueDeliveries(trx: Knex.Transaction, o: ClaimScope): Promise<ClaimedDelivery[]> {
  const select = trx('webhook_deliveries as d')
    .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .leftJoin('events as ev', 'ev.id', 'd.event_id')
    .select([...DELIVERY_COLUMNS.map((c) => `d.${c}`), 'ev.email_id as event_email_id'])
    .where('d.state', 'pending')
    .andWhere('e.active', true)
    .andWhere('d.next_attempt_at', '<=', o.now)
    .andWhere((w) => {
      w.whereNull('d.lease_until').orWhere('d.lease_until', '<', o.now);
    })
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .limit(o.limit);
  if (o.endpointId !== undefined) select.andWhere('d.endpoint_id', o.endpointId);
  if (o.skipEndpoints?.length) select.whereNotIn('d.endpoint_id', o.skipEndpoints);
  const skipEmails = o.skipEmails ?? [];
  if (skipEmails.length)
    select.andWhere((w) => {
      w.whereNull('ev.email_id').orWhereNotIn('ev.email_id', skipEmails);
    });
  return claimRows(
    trx,
    select,
    { table: 'webhook_deliveries', alias: 'd', lease: o.lease },
    (rows: Array<DeliveryRow & { event_email_id: string | null }>) => {
      const found = rows.map((r) => ({ ...deliveryFromRow(r), emailId: r.event_email_id ?? null }));
      return o.pick ? o.pick(found) : found;
    },
  );
}

/** The leases `owner` holds on pending deliveries end now (its node is dead or stopped): any dispatcher claims them. */
export async function endDeliveryLeasesOf(db: Db, owner: string): Promise<number> {
  return db('webhook_deliveries').where({ lease_owner: owner, state: 'pending' }).update({ lease_until: 0 });
}

/** Pending deliveries per lease owner (being posted, or held by a node that died). */
export async function deliveriesHeld(db: Db): Promise<Map<string, number>> {
  const counts = await db('webhook_deliveries')
    .select('lease_owner')
    .count({ n: '*' })
    .where('state', 'pending')
    .whereNotNull('lease_owner')
    .groupBy<Array<{ lease_owner: string; n: number | string }>>('lease_owner');
  return new Map(counts.map((r) => [r.lease_owner, Number(r.n)]));
}

/** A single process owns the SQLite store: at its start, a lease on a pending delivery belongs to a process that died. */
export async function dropDeliveryLeases(db: Db): Promise<void> {
  await dropLeases(db, 'webhook_deliveries', { state: 'pending' });
}

/** A finished attempt: the delivery's state after it, and the attempt's row. */
export interface FinishedAttempt {
  next: WebhookDelivery;
  attempt: AttemptRecord;
}

/**
 * Record attempts, each only while `owner` still holds its delivery's lease,
 * in two statements a chunk however many there are. Answers the ids of the
 * deliveries recorded; one missing was taken over when its lease ran out or
 * its node was released (the new holder records its own attempt), or is gone
 * (its endpoint was deleted meanwhile).
 */
export async function finishAttempts(db: Db, owner: string, finished: FinishedAttempt[]): Promise<Set<string>> {
  const recorded = new Set(
    await updateRows(
      db,
      'webhook_deliveries',
      finished.map(({ next: d }) => ({
        id: d.id,
        state: d.state,
        attempts: d.attempts,
        next_attempt_at: d.nextAttemptAt,
        last_status: d.lastStatus,
        last_error: d.lastError,
        updated_at: d.updatedAt,
      })),
      {
        key: 'id',
        types: {
          id: 'text',
          state: 'text',
          attempts: 'integer',
          next_attempt_at: 'bigint',
          last_status: 'integer',
          last_error: 'text',
          updated_at: 'bigint',
        },
        constant: { lease_owner: null, lease_until: null },
        where: { lease_owner: owner, state: 'pending' },
      },
    ),
  );
  await insertRows(
    db,
    'webhook_attempts',
    finished
      .filter((f) => recorded.has(f.next.id))
      .map(({ attempt: a }) => ({
        delivery_id: a.deliveryId,
        attempt: a.attempt,
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        error: a.error,
        response_body: a.responseBody,
        created_at: a.createdAt,
      })),
  );
  return recorded;
}

/** Give claimed deliveries back unattempted (over an endpoint's share, or its endpoint paused since the claim). */
export async function releaseDeliveries(db: Db, ids: string[], owner: string): Promise<void> {
  await releaseLeases(db, 'webhook_deliveries', owner, ids);
}
