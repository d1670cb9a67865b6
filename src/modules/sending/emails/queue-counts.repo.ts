import type { Db } from '../../../store/db.js';
import type { QueueWait } from './queue.repo.js';

// Counts over the outbound queue for metrics, the cluster's node view and the dashboard (the rows
// themselves are read and written by queue.repo.ts).

const TABLE = 'outbound_queue';

/** Rows being sent per lease owner, and of those how many have their SMTP body started. */
export async function queueRowsHeld(db: Db): Promise<Map<string, { rows: number; dataStarted: number }>> {
  const counts = await db(TABLE)
    .select('lease_owner', 'data_started')
    .count({ n: '*' })
    .where('state', 'submitting')
    .whereNotNull('lease_owner')
    .groupBy<Array<{ lease_owner: string; data_started: unknown; n: number | string }>>('lease_owner', 'data_started');
  const out = new Map<string, { rows: number; dataStarted: number }>();
  for (const r of counts) {
    const e = out.get(r.lease_owner) ?? { rows: 0, dataStarted: 0 };
    e.rows += Number(r.n);
    if (r.data_started === true || Number(r.data_started) === 1) e.dataStarted += Number(r.n);
    out.set(r.lease_owner, e);
  }
  return out;
}

export async function queueStateCounts(db: Db): Promise<Record<string, number>> {
  const rows = await db(TABLE)
    .select('state')
    .count({ n: '*' })
    .groupBy<Array<{ state: string; n: number | string }>>('state');
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}

/**
 * A project's queued rows the MTA holds back for a reason of its own (QueueWait), per kind: how
 * many, one of their reasons, and the earliest next attempt. Throttled rows are left out: the
 * suspended providers say more (mta-status.service.ts deliveryHolds).
 */
export async function queueWaits(
  db: Db,
  projectId: string,
): Promise<Array<{ kind: QueueWait['kind']; rows: number; reason: string; nextAt: number }>> {
  const rows = await db(TABLE)
    .select('wait_kind')
    .count({ n: '*' })
    .max({ reason: 'wait_reason' })
    .min({ next: 'next_attempt_at' })
    .where('project_id', projectId)
    .andWhere('state', 'queued')
    .whereIn('wait_kind', ['warmup', 'dns', 'tls'])
    .groupBy<Array<{ wait_kind: QueueWait['kind']; n: number | string; reason: string | null; next: number | string }>>(
      'wait_kind',
    );
  return rows.map((r) => ({ kind: r.wait_kind, rows: Number(r.n), reason: r.reason ?? '', nextAt: Number(r.next) }));
}
