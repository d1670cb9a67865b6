import type { Knex } from 'knex';
import { dialectOf, lockRows, type Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import { insertRows } from '../../../store/insert-rows.js';
import { lapsedLeases, leaseRows, renewLeases, type Lease } from '../../../store/lease.js';

export const QUEUE_STATES = ['queued', 'submitting', 'done'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];
/** Why a queued row waits when the MTA holds it back itself (migration 0034; docs/delivery.md). */
export type QueueWait = { kind: 'throttle' | 'warmup' | 'dns' | 'tls'; reason: string };

/**
 * One row of the outbound queue: the recipients of an email that go out in
 * one SMTP transaction (one per recipient domain in direct mode, one per
 * email through a relay). Its state is moved by lifecycle.ts alone.
 */
export interface QueueRow {
  id: string;
  emailId: string;
  projectId: string;
  /** recipient domain (direct mode), or '' when the email goes out in one transaction */
  route: string;
  state: QueueState;
  attempts: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** written, and committed, before the message body goes out: after a crash, false means safe to send again */
  dataStarted: boolean;
  /** broadcast mail: claimed only when no transactional mail is due (claimDueRows) */
  bulk: boolean;
  /** null (or absent) when it waits only for the receiver or its turn */
  wait?: QueueWait | null;
  createdAt: number;
  updatedAt: number;
}

const TABLE = 'outbound_queue';

interface Row {
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
  bulk: number | boolean;
  wait_kind: string | null;
  wait_reason: string | null;
  created_at: number;
  updated_at: number;
}

const COLUMNS = [
  'id',
  'email_id',
  'project_id',
  'route',
  'state',
  'attempts',
  'next_attempt_at',
  'lease_owner',
  'lease_until',
  'data_started',
  'bulk',
  'wait_kind',
  'wait_reason',
  'created_at',
  'updated_at',
] as const;

function fromRow(r: Row): QueueRow {
  return {
    id: r.id,
    emailId: r.email_id,
    projectId: r.project_id,
    route: r.route,
    state: r.state as QueueState,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    leaseOwner: r.lease_owner,
    leaseUntil: r.lease_until == null ? null : Number(r.lease_until),
    dataStarted: Boolean(r.data_started),
    bulk: Boolean(r.bulk),
    wait: r.wait_kind ? { kind: r.wait_kind as QueueWait['kind'], reason: r.wait_reason ?? '' } : null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(q: QueueRow): Row {
  return {
    id: q.id,
    email_id: q.emailId,
    project_id: q.projectId,
    route: q.route,
    state: q.state,
    attempts: q.attempts,
    next_attempt_at: q.nextAttemptAt,
    lease_owner: q.leaseOwner,
    lease_until: q.leaseUntil,
    data_started: q.dataStarted,
    bulk: q.bulk,
    wait_kind: q.wait?.kind ?? null,
    wait_reason: q.wait?.reason ?? null,
    created_at: q.createdAt,
    updated_at: q.updatedAt,
  };
}

export async function insertQueueRows(db: Db, list: QueueRow[]): Promise<void> {
  await insertRows(db, TABLE, list.map(toRow) as unknown as Array<Record<string, unknown>>);
}

const updateRow = prepared(
  (db, state, attempts, nextAttemptAt, leaseOwner, leaseUntil, dataStarted, waitKind, waitReason, updatedAt, id) =>
    db(TABLE)
      .update({
        state,
        attempts,
        next_attempt_at: nextAttemptAt,
        lease_owner: leaseOwner,
        lease_until: leaseUntil,
        data_started: dataStarted,
        wait_kind: waitKind,
        wait_reason: waitReason,
        updated_at: updatedAt,
      } as Record<string, string>)
      .where('id', id as string),
  10,
);

/** Persist a row as a transition of lifecycle.ts left it (the queue's hot path: a prepared statement). */
export async function saveQueueRow(db: Db, q: QueueRow): Promise<void> {
  await updateRow(
    db,
    q.state,
    q.attempts,
    q.nextAttemptAt,
    q.leaseOwner,
    q.leaseUntil,
    q.dataStarted,
    q.wait?.kind ?? null,
    q.wait?.reason ?? null,
    q.updatedAt,
    q.id,
  );
}

const dropRow = prepared(
  (db, id) =>
    db(TABLE)
      .delete()
      .where('id', id as string),
  1,
);

/** A finished row that nothing reads again (lifecycle.ts keepsQueueRow). */
export async function deleteQueueRow(db: Db, id: string): Promise<void> {
  await dropRow(db, id);
}

/**
 * PostgreSQL: locks the queue rows of these emails, in id order, until the transaction ends. A
 * change of an email takes its rows' locks before the email's, the order the claim takes them in
 * (rows, then emails), so that two writers never wait on each other. SQLite has one writer.
 */
export const lockQueueRowsOfEmails = (trx: Knex.Transaction, emailIds: string[]) =>
  lockRows(trx, TABLE, emailIds, 'email_id');

/**
 * A broadcast's emails a cancel may take back, as candidates: queued, with a queue row never
 * attempted (lifecycle.ts canWithdraw has the last word). On PostgreSQL a row a worker is claiming
 * right now is left to it, and the rows found stay locked until the transaction ends.
 */
export async function withdrawCandidates(trx: Knex.Transaction, broadcastId: string): Promise<string[]> {
  const q = trx(`${TABLE} as q`)
    .join('emails as e', 'e.id', 'q.email_id')
    .select('q.email_id')
    .where('e.broadcast_id', broadcastId)
    .andWhere('e.status', 'queued')
    .andWhere('q.state', 'queued')
    .andWhere('q.attempts', 0);
  if (dialectOf(trx) === 'pg') void q.forUpdate('q').skipLocked();
  return [...new Set(((await q) as Array<{ email_id: string }>).map((r) => r.email_id))];
}

// read by every record of outcomes: a prepared statement
const rowsOfEmails = prepared<Row>(
  (db, ids) => db(TABLE).select(COLUMNS).whereIn('email_id', oneOf(db, ids)).orderBy('id'),
  1,
);

export async function queueRowsOfEmails(db: Db, emailIds: string[]): Promise<QueueRow[]> {
  if (!emailIds.length) return [];
  return (await rowsOfEmails(db, listParam(emailIds))).map(fromRow);
}

export const queueRowsOfEmail = (db: Db, emailId: string) => queueRowsOfEmails(db, [emailId]);

/**
 * Takes due rows for an attempt, as lifecycle.ts claimRow leaves them:
 * submitting, one more attempt, no data started, held by `lease`. Returns
 * them as they were before the claim; the caller applies claimRow.
 */
export async function claimDueRows(
  trx: Knex.Transaction,
  o: { now: number; limit: number; lease: Lease; bulkLimit?: number },
): Promise<QueueRow[]> {
  // broadcast mail waits behind transactional mail: it gets only the room the latter leaves, and at most bulkLimit
  const rows = await claimStream(trx, o, false, o.limit);
  const bulk = Math.min(o.limit - rows.length, o.bulkLimit ?? o.limit);
  if (bulk > 0) rows.push(...(await claimStream(trx, o, true, bulk)));
  return rows.map(fromRow);
}

// Due rows of one stream, oldest due first; on PostgreSQL locked, skipping rows another node is
// claiming (lease.ts claimRows). Run for every claim: a prepared statement for each limit asked
// (written into the SQL: knex takes a limit as a number only), at most a batch's size of them.
const dueRowsUpTo = new Map<number, ReturnType<typeof dueRows>>();
const dueRows = (limit: number) =>
  prepared<Row>((db, queued, bulk, now) => {
    const q = db(TABLE)
      .select(COLUMNS)
      .where('state', queued as string)
      .andWhere('bulk', bulk as boolean)
      .andWhere('next_attempt_at', '<=', now as number)
      .orderBy('next_attempt_at')
      .limit(limit, { skipBinding: true });
    return dialectOf(db) === 'pg' ? q.forUpdate().skipLocked() : q;
  }, 3);

async function claimStream(
  trx: Knex.Transaction,
  o: { now: number; lease: Lease },
  bulk: boolean,
  limit: number,
): Promise<Row[]> {
  let due = dueRowsUpTo.get(limit);
  if (!due) dueRowsUpTo.set(limit, (due = dueRows(limit)));
  return leaseRows<Row>(trx, await due(trx, 'queued', bulk, o.now), {
    table: TABLE,
    lease: o.lease,
    set: { state: 'submitting', data_started: false, attempts: trx.raw('attempts + 1'), updated_at: o.now },
  });
}

/** The next time anything is due (or, without `bulk`, any transactional mail), to sleep until then. */
export async function nextDueAt(db: Db, bulk = true): Promise<number | null> {
  const q = db(TABLE).where('state', 'queued');
  if (!bulk) q.andWhere('bulk', false);
  const row = (await q.min({ at: 'next_attempt_at' }).first()) as { at: number | null } | undefined;
  return row?.at == null ? null : Number(row.at);
}

/** Rows left submitting by a process that is gone (its lease ran out, or, with `all`, any: SQLite at start). */
export async function orphanedRows(trx: Knex.Transaction, now: number, all: boolean): Promise<QueueRow[]> {
  return ((await lapsedLeases(trx, TABLE, now, all).select(COLUMNS).andWhere('state', 'submitting')) as Row[]).map(
    fromRow,
  );
}

/** The leases `owner` holds on rows being sent end now (its node is dead): the next recovery takes them. */
export async function endQueueLeasesOf(db: Db, owner: string): Promise<number> {
  return db(TABLE).where({ lease_owner: owner, state: 'submitting' }).update({ lease_until: 0 });
}

export async function renewQueueLeases(db: Db, owner: string, ids: string[], until: number): Promise<void> {
  await renewLeases(db, TABLE, owner, ids, until);
}

const setDataStarted = prepared(
  (db, started, id, submitting, owner, now) =>
    db(TABLE)
      .update({ data_started: started } as Record<string, string>)
      .where('id', id as string)
      .andWhere('state', submitting as string)
      .andWhere('lease_owner', owner as string)
      .andWhere('lease_until', '>=', now as number)
      .returning('id'),
  5,
);

/**
 * Written, and committed, before the message body goes out; only while
 * `owner` still holds the row. False when it does not any more (its node was
 * released as dead, its lease taken over): the body must not go, since the
 * row may be sent again by another node.
 */
export async function markDataStarted(db: Db, id: string, owner: string, now: number): Promise<boolean> {
  return (await setDataStarted(db, true, id, 'submitting', owner, now)).length > 0;
}
