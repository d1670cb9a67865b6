import { iso } from '../../../lib/time.js';
import type { Project } from './projects.repo.js';

export function presentProject(p: Project) {
  return {
    id: p.id,
    object: 'project' as const,
    name: p.name,
    approved: p.approved,
    suspended: p.suspended,
    limits: { ...p.limits },
    bounce_suppression_days: p.bounceSuppressionDays,
    soft_bounce_suppression: p.softBounceSuppression
      ? `${p.softBounceSuppression.count}/${p.softBounceSuppression.days}d`
      : null,
    ip_pool: p.ipPool ?? 'default',
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
  };
}
