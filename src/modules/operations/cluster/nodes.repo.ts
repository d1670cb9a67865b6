import type { Db } from '../../../store/db.js';
import { endQueueLeasesOf } from '../../sending/emails/queue.repo.js';
import { queueRowsHeld } from '../../sending/emails/queue-counts.repo.js';
import { deliveriesHeld, endDeliveryLeasesOf } from '../../notifying/webhooks/webhook-deliveries.repo.js';

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

/** How many nodes beat their heartbeat at `since` or later. */
export async function countAlive(db: Db, since: number): Promise<number> {
  const row = await db('nodes')
    .count<Array<{ n: number | string }>>({ n: '*' })
    .where('heartbeat_at', '>=', since)
    .first();
  return Number(row?.n ?? 0);
}

export async function deleteNode(db: Db, id: string): Promise<boolean> {
  return (await db('nodes').where('id', id).delete()) > 0;
}

/** What each lease owner holds now: queue rows being sent (and of those, with data started) and webhook deliveries. */
export async function heldByOwner(
  db: Db,
): Promise<Map<string, { queueRows: number; dataStarted: number; webhookDeliveries: number }>> {
  const [queue, hooks] = [await queueRowsHeld(db), await deliveriesHeld(db)];
  const owners = new Set([...queue.keys(), ...hooks.keys()]);
  return new Map(
    [...owners].map((owner) => [
      owner,
      {
        queueRows: queue.get(owner)?.rows ?? 0,
        dataStarted: queue.get(owner)?.dataStarted ?? 0,
        webhookDeliveries: hooks.get(owner) ?? 0,
      },
    ]),
  );
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
