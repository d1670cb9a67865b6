import type { Db } from '../../../store/db.js';

const DAY_MS = 86_400_000;
/** the longest window a project may count soft bounces over (projects.service.ts parseSoftBounceSuppression) */
export const SOFT_BOUNCE_MAX_DAYS = 365;

/**
 * Counts a soft bounce of a lasting reason against the address (only while its project's
 * soft-bounce policy is on) and answers how many the address has had in the last `days`, this one
 * included.
 */
export async function recordSoftBounce(
  db: Db,
  s: { projectId: string; address: string; reason: string; emailId: string; createdAt: number },
  days: number,
): Promise<number> {
  await db('soft_bounces').insert({
    project_id: s.projectId,
    address: s.address,
    reason: s.reason,
    email_id: s.emailId,
    created_at: s.createdAt,
  });
  const row = (await db('soft_bounces')
    .count({ n: '*' })
    .where({ project_id: s.projectId, address: s.address })
    .andWhere('created_at', '>', s.createdAt - days * DAY_MS)
    .first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The suppressions-prune job: soft bounces older than any window counts them (they are few: only lasting reasons, only while a policy is on). */
export async function deleteOldSoftBounces(db: Db, now: number): Promise<number> {
  return db('soft_bounces')
    .where('created_at', '<', now - SOFT_BOUNCE_MAX_DAYS * DAY_MS)
    .delete();
}
