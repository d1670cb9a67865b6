import type { Db } from '../../../store/db.js';

export async function usageCounts(db: Db, projectIds: string[], periods: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!projectIds.length) return out;
  const rows = (await db('usage_counters')
    .select('project_id', 'period', 'count')
    .whereIn('project_id', projectIds)
    .whereIn('period', periods)) as Array<{
    project_id: string;
    period: string;
    count: number;
  }>;
  for (const r of rows) out.set(`${r.project_id}|${r.period}`, Number(r.count));
  return out;
}

export async function addUsage(db: Db, projectId: string, period: string, n: number): Promise<void> {
  if (n === 0) return;
  await db('usage_counters')
    .insert({ project_id: projectId, period, count: n })
    .onConflict(['project_id', 'period'])
    .merge({ count: db.raw('usage_counters.count + ?', [n]) });
}
