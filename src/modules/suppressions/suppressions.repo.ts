import type { Db } from '../../store/db.js';

import { suppressionKey, type Suppression, type SuppressionReason } from './suppression.js';

/** The suppressed ones among (project, address) pairs, keyed by suppressionKey, with their reasons: one query for a whole batch. */
export async function suppressedAmong(db: Db, pairs: Array<{ projectId: string; address: string }>): Promise<Map<string, SuppressionReason>> {
  const out = new Map<string, SuppressionReason>();
  if (!pairs.length) return out;
  const projects = [...new Set(pairs.map((p) => p.projectId))];
  const addresses = [...new Set(pairs.map((p) => p.address))];
  for (let i = 0; i < addresses.length; i += 5000) {
    const rows = (await db('suppressions')
      .select('project_id', 'address', 'reason')
      .whereIn('project_id', projects)
      .whereIn('address', addresses.slice(i, i + 5000))) as Array<{ project_id: string; address: string; reason: SuppressionReason }>;
    for (const r of rows) out.set(suppressionKey(r.project_id, r.address), r.reason);
  }
  return out;
}

/** Add, keeping the first reason an address was suppressed for. */
export async function addSuppression(db: Db, s: Suppression): Promise<void> {
  await db('suppressions')
    .insert({ project_id: s.projectId, address: s.address, reason: s.reason, email_id: s.emailId, created_at: s.createdAt })
    .onConflict(['project_id', 'address'])
    .ignore();
}

export async function removeSuppression(db: Db, projectId: string, address: string): Promise<boolean> {
  return (await db('suppressions').where({ project_id: projectId, address }).delete()) > 0;
}

export async function listSuppressions(db: Db, projectId: string): Promise<Suppression[]> {
  const rows = (await db('suppressions').select('project_id', 'address', 'reason', 'email_id', 'created_at').where({ project_id: projectId }).orderBy('created_at', 'desc')) as Array<{
    project_id: string;
    address: string;
    reason: SuppressionReason;
    email_id: string | null;
    created_at: number;
  }>;
  return rows.map((r) => ({ projectId: r.project_id, address: r.address, reason: r.reason, emailId: r.email_id, createdAt: Number(r.created_at) }));
}
