import type { Db } from '../../../store/db.js';
import { endQueueLeasesOf } from '../../sending/emails/queue.repo.js';
import { endDeliveryLeasesOf } from '../../notifying/webhooks/webhook-deliveries.repo.js';

/** A serving process of the database, as `nodes` stores it. */
export interface NodeRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: number;
  heartbeatAt: number;
}

interface Row {
  id: string;
  host: string;
  pid: number;
  version: string;
  started_at: number | string;
  heartbeat_at: number | string;
}

const fromRow = (r: Row): NodeRow => ({
  id: r.id,
  host: r.host,
  pid: Number(r.pid),
  version: r.version,
  startedAt: Number(r.started_at),
  heartbeatAt: Number(r.heartbeat_at),
});

export async function registerNode(db: Db, n: NodeRow): Promise<void> {
  await db('nodes').insert({
    id: n.id,
    host: n.host,
    pid: n.pid,
    version: n.version,
    started_at: n.startedAt,
    heartbeat_at: n.heartbeatAt,
  });
}

/** Beats the heartbeat; false when the row is gone (another node found this one dead and released it). */
export async function beat(db: Db, id: string, now: number): Promise<boolean> {
  return (await db('nodes').where('id', id).update({ heartbeat_at: now })) > 0;
}

export async function listNodes(db: Db): Promise<NodeRow[]> {
  return (await db('nodes').select<Row[]>('*').orderBy('started_at')).map(fromRow);
}

/** Nodes whose last heartbeat is older than `before`. */
export async function staleNodes(db: Db, before: number): Promise<NodeRow[]> {
  const rows = await db('nodes').select<Row[]>('*').where('heartbeat_at', '<', before);
  return rows.map(fromRow);
}

export async function deleteNode(db: Db, id: string): Promise<boolean> {
  return (await db('nodes').where('id', id).delete()) > 0;
}

/** What each lease owner holds now: queue rows being sent (and of those, with data started) and webhook deliveries. */
export async function heldByOwner(
  db: Db,
): Promise<Map<string, { queueRows: number; dataStarted: number; webhookDeliveries: number }>> {
  const out = new Map<string, { queueRows: number; dataStarted: number; webhookDeliveries: number }>();
  const entry = (owner: string) => {
    let e = out.get(owner);
    if (!e) out.set(owner, (e = { queueRows: 0, dataStarted: 0, webhookDeliveries: 0 }));
    return e;
  };
  const queue = await db('outbound_queue')
    .select('lease_owner', 'data_started')
    .count({ n: '*' })
    .where('state', 'submitting')
    .whereNotNull('lease_owner')
    .groupBy<Array<{ lease_owner: string; data_started: unknown; n: number | string }>>('lease_owner', 'data_started');
  for (const r of queue) {
    const e = entry(r.lease_owner);
    e.queueRows += Number(r.n);
    if (r.data_started === true || Number(r.data_started) === 1) e.dataStarted += Number(r.n);
  }
  const hooks = await db('webhook_deliveries')
    .select('lease_owner')
    .count({ n: '*' })
    .where('state', 'pending')
    .whereNotNull('lease_owner')
    .groupBy<Array<{ lease_owner: string; n: number | string }>>('lease_owner');
  for (const r of hooks) entry(r.lease_owner).webhookDeliveries += Number(r.n);
  return out;
}

/**
 * What a dead node held is due for recovery now: its queue rows' and webhook
 * deliveries' leases end (the MTA's recovery then requeues a row whose data
 * had not started and makes the others ambiguous; a delivery is claimed
 * again). Counts the rows released.
 */
export async function releaseHeldBy(db: Db, owner: string): Promise<{ queueRows: number; webhookDeliveries: number }> {
  return { queueRows: await endQueueLeasesOf(db, owner), webhookDeliveries: await endDeliveryLeasesOf(db, owner) };
}
