import type { Knex } from 'knex';
import type { Db } from '../../store/store.js';
import { prepared } from '../../store/prepared.js';
import { insertRows } from '../../store/insert-rows.js';
import { claimedDelivery } from './lifecycle.js';

export type DeliveryState = 'queued' | 'submitting' | 'done';

/** One queue row: the recipients of an email that go out in one SMTP transaction. */
export interface Delivery {
  id: string;
  emailId: string;
  projectId: string;
  /** recipient domain (direct mode), or '' when the email goes out in one transaction */
  route: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  dataStarted: boolean;
  createdAt: number;
  updatedAt: number;
}

interface DeliveryRow {
  id: string;
  email_id: string;
  project_id: string;
  route: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  data_started: number | boolean;
  created_at: number;
  updated_at: number;
}

const COLUMNS = ['id', 'email_id', 'project_id', 'route', 'state', 'attempts', 'next_attempt_at', 'lease_owner', 'lease_until', 'data_started', 'created_at', 'updated_at'] as const;

function fromRow(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    emailId: r.email_id,
    projectId: r.project_id,
    route: r.route,
    state: r.state as DeliveryState,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    leaseOwner: r.lease_owner,
    leaseUntil: r.lease_until == null ? null : Number(r.lease_until),
    dataStarted: Boolean(r.data_started),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(d: Delivery): DeliveryRow {
  return {
    id: d.id,
    email_id: d.emailId,
    project_id: d.projectId,
    route: d.route,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt,
    lease_owner: d.leaseOwner,
    lease_until: d.leaseUntil,
    data_started: d.dataStarted,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export async function insertDeliveries(db: Db, list: Delivery[]): Promise<void> {
  await insertRows(db, 'deliveries', list.map(toRow) as unknown as Array<Record<string, unknown>>);
}

const updateDelivery = prepared(
  (db, state, attempts, nextAttemptAt, leaseOwner, leaseUntil, dataStarted, updatedAt, id) =>
    db('deliveries')
      .update({ state, attempts, next_attempt_at: nextAttemptAt, lease_owner: leaseOwner, lease_until: leaseUntil, data_started: dataStarted, updated_at: updatedAt } as Record<string, string>)
      .where('id', id as string),
  8,
);

export async function saveDelivery(db: Db, d: Delivery): Promise<void> {
  await updateDelivery(db, d.state, d.attempts, d.nextAttemptAt, d.leaseOwner, d.leaseUntil, d.dataStarted, d.updatedAt, d.id);
}

const dropDelivery = prepared((db, id) => db('deliveries').delete().where('id', id as string), 1);

/** A finished row that nothing reads again (lifecycle.ts keepsQueueRow). */
export async function deleteDelivery(db: Db, id: string): Promise<void> {
  await dropDelivery(db, id);
}

export async function deliveriesOfEmail(db: Db, emailId: string): Promise<Delivery[]> {
  return ((await db('deliveries').select(COLUMNS).where({ email_id: emailId }).orderBy('id')) as DeliveryRow[]).map(fromRow);
}

export async function deliveriesOfEmails(db: Db, emailIds: string[]): Promise<Delivery[]> {
  if (!emailIds.length) return [];
  return ((await db('deliveries').select(COLUMNS).whereIn('email_id', emailIds).orderBy('id')) as DeliveryRow[]).map(fromRow);
}

export async function findDelivery(db: Db, id: string): Promise<Delivery | null> {
  const row = (await db('deliveries').select(COLUMNS).where({ id }).first()) as DeliveryRow | undefined;
  return row ? fromRow(row) : null;
}

/**
 * Claim due rows: queued → submitting with a lease, attempts + 1. On
 * PostgreSQL the rows are locked with SKIP LOCKED so that several processes
 * share the queue without taking the same row; on SQLite one process owns
 * the queue and the single writer connection serialises claims.
 */
export async function claimDue(trx: Knex.Transaction, client: 'sqlite' | 'pg', opts: { now: number; limit: number; owner: string; leaseMs: number }): Promise<Delivery[]> {
  const q = trx('deliveries').select(COLUMNS).where('state', 'queued').andWhere('next_attempt_at', '<=', opts.now).orderBy('next_attempt_at').limit(opts.limit);
  if (client === 'pg') q.forUpdate().skipLocked();
  const rows = ((await q) as DeliveryRow[]).map(fromRow);
  if (!rows.length) return [];
  await trx('deliveries')
    .whereIn('id', rows.map((r) => r.id))
    .update({ state: 'submitting', lease_owner: opts.owner, lease_until: opts.now + opts.leaseMs, data_started: false, attempts: trx.raw('attempts + 1'), updated_at: opts.now });
  return rows.map((r) => claimedDelivery(r, opts.now, { owner: opts.owner, until: opts.now + opts.leaseMs }));
}

/** The next time anything is due, to sleep until then. */
export async function nextDueAt(db: Db): Promise<number | null> {
  const row = (await db('deliveries').where('state', 'queued').min({ at: 'next_attempt_at' }).first()) as { at: number | null } | undefined;
  return row?.at == null ? null : Number(row.at);
}

/** Rows left submitting by a process that is gone (its lease ran out, or, on SQLite, any at start). */
export async function orphanedSubmitting(trx: Knex.Transaction, client: 'sqlite' | 'pg', now: number, all: boolean): Promise<Delivery[]> {
  const q = trx('deliveries').select(COLUMNS).where('state', 'submitting');
  if (!all) q.andWhere('lease_until', '<', now);
  if (client === 'pg') q.forUpdate().skipLocked();
  return ((await q) as DeliveryRow[]).map(fromRow);
}

export async function renewLeases(db: Db, owner: string, ids: string[], until: number): Promise<void> {
  if (ids.length) await db('deliveries').whereIn('id', ids).andWhere({ state: 'submitting', lease_owner: owner }).update({ lease_until: until });
}

const setDataStarted = prepared((db, started, id) => db('deliveries').update({ data_started: started } as Record<string, string>).where('id', id as string), 2);

/** Written, and committed, before the message body goes out. */
export async function markDataStarted(db: Db, ids: string[]): Promise<void> {
  for (const id of ids) await setDataStarted(db, true, id);
}

export async function queueCounts(db: Db): Promise<Record<string, number>> {
  const rows = (await db('deliveries').select('state').count({ n: '*' }).groupBy('state')) as Array<{ state: string; n: number | string }>;
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}
