import { escapeLike, type Db } from '../../../store/db.js';
import { insertRows } from '../../../store/insert-rows.js';
import type { RequestLog } from './request-log.js';

type LogRow = {
  id: string;
  project_id: string;
  key_id: string;
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  created_at: number | string;
};

export async function insertRequestLogs(db: Db, logs: RequestLog[]): Promise<void> {
  await insertRows(
    db,
    'request_logs',
    logs.map((l) => ({
      id: l.id,
      project_id: l.projectId,
      key_id: l.keyId,
      request_id: l.requestId,
      method: l.method,
      path: l.path,
      status: l.status,
      duration_ms: l.durationMs,
      created_at: l.createdAt,
    })),
  );
}

export interface LogFilter {
  status?: [number, number] | undefined;
  /** this path, or any path under it */
  path?: string | undefined;
}

/** One page newest first (ids are time-ordered); `limit + 1` rows so that the caller knows whether more follow. */
export async function pageOfRequestLogs(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
  filter: LogFilter,
): Promise<RequestLog[]> {
  const q = db('request_logs').select('*').where({ project_id: projectId });
  if (before) q.andWhere('id', '<', before);
  if (filter.status) q.andWhereBetween('status', filter.status);
  if (filter.path) {
    const under = `${escapeLike(filter.path.replace(/\/+$/, ''))}/%`;
    q.andWhere((w) => {
      w.where('path', filter.path!).orWhereRaw(`path like ? escape '\\'`, [under]);
    });
  }
  const rows = (await q.orderBy('id', 'desc').limit(limit + 1)) as LogRow[];
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    keyId: r.key_id,
    requestId: r.request_id,
    method: r.method,
    path: r.path,
    status: Number(r.status),
    durationMs: Number(r.duration_ms),
    createdAt: Number(r.created_at),
  }));
}

/** Deletes requests logged before `before`, at most `max` of them (a long backlog goes in several short transactions). */
export async function pruneRequestLogs(db: Db, before: number, max: number): Promise<number> {
  const ids = db('request_logs').select('id').where('created_at', '<', before).limit(max);
  return db('request_logs').whereIn('id', ids).delete();
}
