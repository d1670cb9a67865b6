import type { Db, SqlRunner } from '../../../store/db.js';
import { prepared } from '../../../store/prepared.js';
import { PROJECT_COLUMNS, projectFromRow, type Project, type ProjectRow } from '../projects/projects.repo.js';
import type { KeyMode, Scope } from './scopes.js';

export interface ApiKey {
  id: string;
  projectId: string;
  name: string | null;
  mode: KeyMode;
  scopes: Scope[];
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

interface KeyRow {
  id: string;
  project_id: string;
  name: string | null;
  mode: string;
  scopes: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const KEY_COLUMNS = [
  'id',
  'project_id',
  'name',
  'mode',
  'scopes',
  'prefix',
  'created_at',
  'last_used_at',
  'revoked_at',
] as const;

function keyFromRow(r: KeyRow): ApiKey {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    mode: r.mode as KeyMode,
    scopes: JSON.parse(r.scopes) as Scope[],
    prefix: r.prefix,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at == null ? null : Number(r.last_used_at),
    revokedAt: r.revoked_at == null ? null : Number(r.revoked_at),
  };
}

export async function insertKey(db: Db, k: ApiKey, secretHash: string): Promise<void> {
  await db('api_keys').insert({
    id: k.id,
    project_id: k.projectId,
    name: k.name,
    mode: k.mode,
    scopes: JSON.stringify(k.scopes),
    secret_hash: secretHash,
    prefix: k.prefix,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  });
}

export async function findKey(db: Db, id: string): Promise<ApiKey | null> {
  const row = (await db('api_keys').select(KEY_COLUMNS).where({ id }).first()) as KeyRow | undefined;
  return row ? keyFromRow(row) : null;
}

export async function listKeys(db: Db, projectId: string): Promise<ApiKey[]> {
  const rows = (await db('api_keys')
    .select(KEY_COLUMNS)
    .where({ project_id: projectId })
    .orderBy('id', 'desc')) as KeyRow[];
  return rows.map(keyFromRow);
}

export async function revokeKey(db: Db, id: string, at: number): Promise<void> {
  await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: at });
}

const keyWithProjectByHash = prepared<Record<string, unknown>>(
  (db, hash) =>
    db('api_keys as k')
      .join('projects as p', 'p.id', 'k.project_id')
      .select([...KEY_COLUMNS.map((c) => `k.${c} as k_${c}`), ...PROJECT_COLUMNS.map((c) => `p.${c} as p_${c}`)])
      .where('k.secret_hash', hash as string),
  1,
);

/** The key and its project in one read: the whole of what authentication needs, on every request. */
export async function findKeyWithProjectByHash(
  db: Db | SqlRunner,
  secretHash: string,
): Promise<{ key: ApiKey; project: Project } | null> {
  return keyWithProjectFromRow((await keyWithProjectByHash(db, secretHash))[0]);
}

/** The same by the key's id: a dashboard session names its key, never holds it. */
export async function findKeyWithProjectById(db: Db, id: string): Promise<{ key: ApiKey; project: Project } | null> {
  const row = (await db('api_keys as k')
    .join('projects as p', 'p.id', 'k.project_id')
    .select([...KEY_COLUMNS.map((c) => `k.${c} as k_${c}`), ...PROJECT_COLUMNS.map((c) => `p.${c} as p_${c}`)])
    .where('k.id', id)
    .first()) as Record<string, unknown> | undefined;
  return keyWithProjectFromRow(row);
}

function keyWithProjectFromRow(row: Record<string, unknown> | undefined): { key: ApiKey; project: Project } | null {
  if (!row) return null;
  const pick = (prefix: string) =>
    Object.fromEntries(
      Object.entries(row)
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, v]) => [k.slice(prefix.length), v]),
    );
  return {
    key: keyFromRow(pick('k_') as unknown as KeyRow),
    project: projectFromRow(pick('p_') as unknown as ProjectRow),
  };
}

export async function touchKeys(db: Db, lastUsed: Map<string, number>): Promise<void> {
  for (const [id, at] of lastUsed) await db('api_keys').where({ id }).update({ last_used_at: at });
}
