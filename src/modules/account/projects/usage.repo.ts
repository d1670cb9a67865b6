import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';

// Read and counted in every accept's transaction: prepared statements.

const countsOf = prepared<{ project_id: string; period: string; count: number }>(
  (db, projects, periods) =>
    db('usage_counters')
      .select('project_id', 'period', 'count')
      .whereIn('project_id', oneOf(db, projects))
      .whereIn('period', oneOf(db, periods)),
  2,
);

export async function usageCounts(db: Db, projectIds: string[], periods: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!projectIds.length) return out;
  for (const r of await countsOf(db, listParam(projectIds), listParam(periods)))
    out.set(`${r.project_id}|${r.period}`, Number(r.count));
  return out;
}

// the parameters in the order knex binds them: an insert's columns sorted by name
const addCount = prepared(
  (db, n, period, projectId, again) =>
    db('usage_counters')
      .insert({ project_id: projectId, period, count: n })
      .onConflict(['project_id', 'period'])
      .merge({ count: db.raw('usage_counters.count + ?', [again as number]) }),
  4,
);

export async function addUsage(db: Db, projectId: string, period: string, n: number): Promise<void> {
  if (n === 0) return;
  await addCount(db, n, period, projectId, n);
}
