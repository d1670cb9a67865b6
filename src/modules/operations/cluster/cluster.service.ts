import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { notFound } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import * as repo from './nodes.repo.js';

// The processes of one database (docs/operations.md "Running several nodes").
// A node's id is random, made once per process: it is the owner written into
// every lease the process takes (queue rows, webhook deliveries), so that
// what a dead node held can be found and released, in containers too, where
// every process is pid 1.

export interface ClusterDeps {
  store: Store;
  clock: Clock;
  /** cluster.dead_after */
  deadAfterMs: number;
  /** this process's Posthorn version, shown by cluster status (only register needs it) */
  version?: string;
}

export interface Holdings {
  queueRows: number;
  dataStarted: number;
  webhookDeliveries: number;
}

export interface NodeStatus {
  node: repo.NodeRow | null;
  /** the lease owner: the node's id (or a lease owner no registered node has: one from before nodes were registered) */
  id: string;
  alive: boolean;
  holds: Holdings;
}

export const newNodeId = () => `node_${randomBytes(10).toString('hex')}`;

export const isAlive = (n: repo.NodeRow, now: number, deadAfterMs: number) => now - n.heartbeatAt <= deadAfterMs;

/** Every node, dead ones too, with what each holds; and owners of leases no node row names. */
async function clusterStatus(deps: ClusterDeps): Promise<NodeStatus[]> {
  const now = deps.clock.now();
  const [nodes, held] = await Promise.all([repo.listNodes(deps.store.reader), repo.heldByOwner(deps.store.reader)]);
  const none = { queueRows: 0, dataStarted: 0, webhookDeliveries: 0 };
  const out: NodeStatus[] = nodes.map((n) => ({
    node: n,
    id: n.id,
    alive: isAlive(n, now, deps.deadAfterMs),
    holds: held.get(n.id) ?? none,
  }));
  for (const [owner, holds] of held)
    if (!nodes.some((n) => n.id === owner)) out.push({ node: null, id: owner, alive: false, holds });
  return out;
}

export function clusterService(deps: ClusterDeps) {
  return {
    /** Registers this process under `id`, or again after another node released it. */
    async register(id: string, startedAt: number): Promise<void> {
      const now = deps.clock.now();
      const node = {
        id,
        host: hostname(),
        pid: process.pid,
        version: deps.version ?? 'unknown',
        startedAt,
        heartbeatAt: now,
      };
      await deps.store.tx((trx) => repo.registerNode(trx, node));
    },
    /** false: this node's row was gone (released as dead by another node or by the operator). */
    beat: (id: string) => deps.store.tx((trx) => repo.beat(trx, id, deps.clock.now())),
    status: () => clusterStatus(deps),
    /** How many nodes are alive now (the caller included, if its heartbeat is current). */
    alive: () => repo.countAlive(deps.store.reader, deps.clock.now() - deps.deadAfterMs),
    /** Releases what a node (or a bare lease owner) holds and forgets it; 404 when neither is known. */
    async release(id: string): Promise<{ id: string; queueRows: number; webhookDeliveries: number }> {
      const known = await deps.store.tx(async (trx) => {
        const had = await repo.deleteNode(trx, id);
        const released = await repo.releaseHeldBy(trx, id);
        return { had, released };
      });
      if (!known.had && !known.released.queueRows && !known.released.webhookDeliveries) throw notFound(`node ${id}`);
      return { id, ...known.released };
    },
    /** The nodes whose heartbeat is older than cluster.dead_after, each released in its own transaction. */
    async releaseDead(): Promise<Array<{ node: repo.NodeRow; queueRows: number; webhookDeliveries: number }>> {
      const stale = await repo.staleNodes(deps.store.reader, deps.clock.now() - deps.deadAfterMs);
      const out = [];
      for (const node of stale) {
        const released = await deps.store.tx(async (trx) =>
          // another node may have released it a moment ago: only the one that deletes the row releases
          (await repo.deleteNode(trx, node.id)) ? repo.releaseHeldBy(trx, node.id) : null,
        );
        if (released) out.push({ node, ...released });
      }
      return out;
    },
    /** A clean stop: what this node still holds is released at once, and its row goes. */
    async leave(id: string): Promise<void> {
      await deps.store.tx(async (trx) => {
        await repo.releaseHeldBy(trx, id);
        await repo.deleteNode(trx, id);
      });
    },
  };
}

export type ClusterService = ReturnType<typeof clusterService>;
