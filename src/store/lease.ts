import type { Knex } from 'knex';
import { dialectOf, type Db } from './db.js';

/**
 * The one claim/lease helper of the store's queues (STYLE 8, 14): the MTA's
 * outbound queue and the webhook outbox. A row is taken by writing its
 * `lease_owner` and `lease_until`; only the holder records its outcome, and
 * a lease that runs out means its holder died, so the row is due again.
 */
export interface Lease {
  owner: string;
  until: number;
}

export interface ClaimSpec {
  /** the table whose rows are leased */
  table: string;
  /** PostgreSQL: the alias of that table in `select`, for FOR UPDATE OF when the select joins */
  alias?: string;
  lease: Lease;
  /** more columns the claim writes with the lease (a state, a counter) */
  set?: Record<string, unknown>;
}

/**
 * Takes the rows `select` finds (id first among its columns) in the caller's
 * transaction, or those of them `pick` keeps: the others stay as they were,
 * not leased and not written, so nothing has to give them back. On PostgreSQL
 * they are locked with SKIP LOCKED, so that several processes share a queue
 * without taking the same row; on SQLite one process owns the queue and its
 * single writer serialises the claims.
 */
export async function claimRows<Found, Taken extends { id: string }>(
  trx: Knex.Transaction,
  select: Knex.QueryBuilder,
  spec: ClaimSpec,
  pick: (found: Found[]) => Taken[],
): Promise<Taken[]> {
  if (dialectOf(trx) === 'pg') select.forUpdate(...(spec.alias ? [spec.alias] : [])).skipLocked();
  return leaseRows(trx, pick((await select) as Found[]), spec);
}

/** Takes rows the caller has selected (and, on PostgreSQL, locked as claimRows does) under `spec.lease`. */
export async function leaseRows<Row extends { id: string }>(
  trx: Knex.Transaction,
  rows: Row[],
  spec: ClaimSpec,
): Promise<Row[]> {
  if (!rows.length) return rows;
  await trx(spec.table)
    .whereIn(
      'id',
      rows.map((r) => r.id),
    )
    .update({ ...spec.set, lease_owner: spec.lease.owner, lease_until: spec.lease.until });
  return rows;
}

/** Rows whose holder is gone: leased (or, with `all`, any held) and lapsed; locked like a claim on PostgreSQL. */
export function lapsedLeases(trx: Knex.Transaction, table: string, now: number, all: boolean): Knex.QueryBuilder {
  const q = trx(table).whereNotNull('lease_owner');
  if (!all) q.andWhere('lease_until', '<', now);
  if (dialectOf(trx) === 'pg') q.forUpdate().skipLocked();
  return q;
}

/** Extends the leases `owner` holds on these rows (an attempt that outlasts its lease keeps its rows). */
export async function renewLeases(db: Db, table: string, owner: string, ids: string[], until: number): Promise<void> {
  if (ids.length) await db(table).whereIn('id', ids).andWhere('lease_owner', owner).update({ lease_until: until });
}

/** Gives rows back unattempted: the lease `owner` holds on them ends now. */
export async function releaseLeases(db: Db, table: string, owner: string, ids: string[]): Promise<void> {
  if (ids.length)
    await db(table).whereIn('id', ids).andWhere('lease_owner', owner).update({ lease_owner: null, lease_until: null });
}

/** Ends every lease of the table's rows that match `where` (a single-process queue, at start: any holder is dead). */
export async function dropLeases(db: Db, table: string, where: Record<string, unknown>): Promise<void> {
  await db(table).where(where).whereNotNull('lease_owner').update({ lease_owner: null, lease_until: null });
}
