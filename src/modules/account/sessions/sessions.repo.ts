import type { Db } from '../../../store/db.js';

export interface SessionRow {
  keyId: string;
  csrfToken: string;
  expiresAt: number;
}

export async function insertSession(db: Db, s: SessionRow & { idHash: string; createdAt: number }): Promise<void> {
  await db('dashboard_sessions').insert({
    id_hash: s.idHash,
    key_id: s.keyId,
    csrf_token: s.csrfToken,
    created_at: s.createdAt,
    expires_at: s.expiresAt,
  });
}

export async function findSession(db: Db, idHash: string): Promise<SessionRow | null> {
  const row = (await db('dashboard_sessions')
    .select('key_id', 'csrf_token', 'expires_at')
    .where({ id_hash: idHash })
    .first()) as { key_id: string; csrf_token: string; expires_at: number | string } | undefined;
  return row ? { keyId: row.key_id, csrfToken: row.csrf_token, expiresAt: Number(row.expires_at) } : null;
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db('dashboard_sessions').where({ id_hash: idHash }).delete();
}

export async function deleteExpiredSessions(db: Db, now: number): Promise<number> {
  return db('dashboard_sessions').where('expires_at', '<=', now).delete();
}
