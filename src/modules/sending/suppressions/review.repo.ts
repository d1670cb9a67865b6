import type { Knex } from 'knex';
import type { Db } from '../../../store/db.js';

export interface BounceSuppressionRow {
  project_id: string;
  address: string;
  email_id: string | null;
  bounce_reason: string | null;
  bounce_status: string | null;
  diagnostic: string | null;
}

/** The bounce suppressions in force at `now` (of one project, or all), by project and address. */
export async function bounceSuppressions(
  db: Db,
  now: number,
  projectId: string | undefined,
): Promise<BounceSuppressionRow[]> {
  const q = db('suppressions')
    .select('project_id', 'address', 'email_id', 'bounce_reason', 'bounce_status', 'diagnostic')
    .where('reason', 'bounce')
    .andWhere((w: Knex.QueryBuilder) => {
      w.whereNull('expires_at').orWhere('expires_at', '>', now);
    })
    .orderBy(['project_id', 'address']);
  if (projectId) q.andWhere('project_id', projectId);
  return (await q) as BounceSuppressionRow[];
}
