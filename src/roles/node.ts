import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import type { ClusterService } from '../modules/operations/cluster/cluster.service.js';
import type { Role } from './role.js';

/** How often a node beats its heartbeat and looks for dead ones: six times per cluster.dead_after, at most once a second. */
export const heartbeatEvery = (deadAfterMs: number) => Math.max(1000, Math.floor(deadAfterMs / 6));

/**
 * This process as a node of its database (docs/operations.md "Running several
 * nodes"): registered under its random id before the MTA and the dispatcher
 * take a lease, a heartbeat every few seconds, and on each beat the nodes
 * whose heartbeat is older than cluster.dead_after released, their mail
 * handed to this node's MTA recovery at once (`released`). Stopped after the
 * MTA and the dispatcher: what it still holds then is released, and its row
 * goes, so that a clean stop leaves nothing waiting for anyone.
 */
export async function startNode(o: {
  id: string;
  cluster: ClusterService;
  deadAfterMs: number;
  logger: Logger;
  now: () => number;
  released: () => void;
  /** the nodes alive, counted at every beat (this one included): the dispatcher shares endpoints' windows among them */
  alive: (nodes: number) => void;
  /** false on SQLite: one process owns the database, there is no other node to find dead or to count */
  shared: boolean;
}): Promise<Role> {
  await o.cluster.register(o.id, o.now());
  o.logger.info({ node: o.id }, 'node registered');
  const waker = new Waker();
  let stopped = false;
  const tick = async () => {
    if (!(await o.cluster.beat(o.id))) {
      // Late by more than dead_after (a stalled process, a database out of reach): another node took
      // what this one held. Its attempts still running find their rows taken and record nothing.
      o.logger.warn({ node: o.id }, 'this node was released as dead by another; registering again');
      await o.cluster.register(o.id, o.now());
    }
    if (!o.shared) return;
    const dead = await o.cluster.releaseDead();
    for (const d of dead)
      o.logger.warn(
        {
          node: d.node.id,
          host: d.node.host,
          pid: d.node.pid,
          silentMs: o.now() - d.node.heartbeatAt,
          queueRows: d.queueRows,
          webhookDeliveries: d.webhookDeliveries,
        },
        'a node stopped beating its heartbeat: released what it held',
      );
    if (dead.some((d) => d.queueRows > 0)) o.released();
    o.alive(Math.max(1, await o.cluster.alive()));
  };
  const loop = (async () => {
    while (!stopped) {
      await waker.sleep(heartbeatEvery(o.deadAfterMs));
      if (stopped) break;
      await tick().catch((e: unknown) => o.logger.warn({ err: e, node: o.id }, 'heartbeat failed; trying again'));
    }
  })();
  return {
    name: 'node',
    async stop() {
      stopped = true;
      waker.wake();
      await loop;
      await o.cluster
        .leave(o.id)
        .catch((e: unknown) => o.logger.warn({ err: e, node: o.id }, 'could not leave the cluster cleanly'));
    },
  };
}
