import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { broadcastPeriod, periodsOf, verifyPeriod } from '../projects/periods.js';
import { getProject } from '../projects/projects.service.js';
import type { ProjectLimits } from '../projects/projects.repo.js';
import { usageCounts } from '../projects/usage.repo.js';

export interface UsageDeps {
  store: Store;
  clock: Clock;
}

/** What a project has used of its limits (0 = unlimited): live recipients today and this month (UTC), verifications this month. */
export interface ProjectUsage {
  sentToday: number;
  sentThisMonth: number;
  /** of which broadcast mail (issue 27) */
  broadcastToday: number;
  broadcastThisMonth: number;
  verificationsUsed: number;
  limits: ProjectLimits;
}

export async function projectUsage(deps: UsageDeps, projectId: string): Promise<ProjectUsage> {
  const project = await getProject(deps, projectId);
  const now = deps.clock.now();
  const { day, month } = periodsOf(now);
  const verify = verifyPeriod(now);
  const counts = await usageCounts(
    deps.store.reader,
    [projectId],
    [day, month, verify, broadcastPeriod(day), broadcastPeriod(month)],
  );
  const count = (period: string) => counts.get(`${projectId}|${period}`) ?? 0;
  return {
    sentToday: count(day),
    sentThisMonth: count(month),
    broadcastToday: count(broadcastPeriod(day)),
    broadcastThisMonth: count(broadcastPeriod(month)),
    verificationsUsed: count(verify),
    limits: project.limits,
  };
}

export function usageService(deps: UsageDeps) {
  return { get: (projectId: string) => projectUsage(deps, projectId) };
}

export type UsageService = ReturnType<typeof usageService>;
