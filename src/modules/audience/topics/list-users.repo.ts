import type { Db } from '../../../store/db.js';

/**
 * A broadcast not over yet (a draft, scheduled or sending) that sends to an
 * audience or segment, or on a topic: deleting one of those is refused while
 * it does (a deleted segment must never turn a broadcast into a send to
 * every contact). Here, in the module the others build on: the audiences,
 * segments and topics modules ask it, and the broadcasts module uses them.
 */
export async function broadcastUsing(
  db: Db,
  projectId: string,
  what: { audience?: string; segment?: string; topic?: string },
): Promise<{ id: string; name: string } | null> {
  const q = db('broadcasts')
    .select('id', 'name')
    .where({ project_id: projectId })
    .whereIn('status', ['draft', 'scheduled', 'sending']);
  if (what.audience !== undefined) q.andWhere({ audience_id: what.audience });
  if (what.segment !== undefined) q.andWhere({ segment_id: what.segment });
  if (what.topic !== undefined) q.andWhere({ topic_id: what.topic });
  return ((await q.orderBy('id').first()) as { id: string; name: string } | undefined) ?? null;
}
