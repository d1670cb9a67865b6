import { iso } from '../../../lib/time.js';
import type { NodeStatus } from './cluster.service.js';

/** `posthorn cluster status --json`: each node (and each lease owner no node row names), what it holds. */
export function presentNode(s: NodeStatus, now: number) {
  return {
    id: s.id,
    state: s.node === null ? ('unregistered' as const) : s.alive ? ('alive' as const) : ('dead' as const),
    host: s.node?.host ?? null,
    pid: s.node?.pid ?? null,
    version: s.node?.version ?? null,
    started_at: s.node ? iso(s.node.startedAt) : null,
    last_heartbeat_at: s.node ? iso(s.node.heartbeatAt) : null,
    heartbeat_age_ms: s.node ? Math.max(0, now - s.node.heartbeatAt) : null,
    holds: {
      queue_rows: s.holds.queueRows,
      data_started: s.holds.dataStarted,
      webhook_deliveries: s.holds.webhookDeliveries,
    },
  };
}

export function presentClusterStatus(nodes: NodeStatus[], now: number, deadAfterMs: number) {
  return { dead_after_ms: deadAfterMs, nodes: nodes.map((n) => presentNode(n, now)) };
}
