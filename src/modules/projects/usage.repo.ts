import type { Db } from '../../store/store.js';

/** UTC periods of the sending limits: 'd:2026-11-22', 'm:2026-11'. */
export function periodsOf(now: number): { day: string; month: string } {
  const iso = new Date(now).toISOString();
  return { day: `d:${iso.slice(0, 10)}`, month: `m:${iso.slice(0, 7)}` };
}

export async function usageCounts(db: Db, projectIds: string[], periods: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!projectIds.length) return out;
  const rows = (await db('usage_counters').select('project_id', 'period', 'count').whereIn('project_id', projectIds).whereIn('period', periods)) as Array<{
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
