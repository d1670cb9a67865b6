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
  /** the one domain the key may send from (docs/projects-and-keys.md); null: any of the project's */
  domainId: string | null;
  /** that domain's name, read with the key; null when it has none or the domain was removed */
  domainName: string | null;
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
  domain_id: string | null;
  /** from the join on the key's domain */
  domain_name: string | null;
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
  'domain_id',
] as const;

/**
 * The keys with their domain's name: `k.<column>` as `<prefix><column>`, and the name as
 * `<prefix>domain_name` (null for a key without a domain, or whose domain was removed).
 */
function keysWithDomain(db: Db, prefix = '') {
  return db('api_keys as k')
    .leftJoin('domains as kd', function () {
      this.on('kd.id', '=', 'k.domain_id').andOn('kd.project_id', '=', 'k.project_id');
    })
    .select([...KEY_COLUMNS.map((c) => `k.${c} as ${prefix}${c}`), `kd.name as ${prefix}domain_name`]);
}

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
    domainId: r.domain_id ?? null,
    domainName: r.domain_id == null ? null : (r.domain_name ?? null),
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
    domain_id: k.domainId,
  });
}

export async function findKey(db: Db, id: string): Promise<ApiKey | null> {
  const row = (await keysWithDomain(db).where('k.id', id).first()) as KeyRow | undefined;
  return row ? keyFromRow(row) : null;
}

export async function listKeys(db: Db, projectId: string): Promise<ApiKey[]> {
  const rows = (await keysWithDomain(db).where('k.project_id', projectId).orderBy('k.id', 'desc')) as KeyRow[];
  return rows.map(keyFromRow);
}

export async function renameKey(db: Db, id: string, name: string | null): Promise<void> {
  await db('api_keys').where({ id }).update({ name });
}

export async function revokeKey(db: Db, id: string, at: number): Promise<void> {
  await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: at });
}

const keyWithProjectByHash = prepared<Record<string, unknown>>(
  (db, hash) =>
    keysWithDomain(db, 'k_')
      .join('projects as p', 'p.id', 'k.project_id')
      .select(PROJECT_COLUMNS.map((c) => `p.${c} as p_${c}`))
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
  const row = (await keysWithDomain(db, 'k_')
    .join('projects as p', 'p.id', 'k.project_id')
    .select(PROJECT_COLUMNS.map((c) => `p.${c} as p_${c}`))
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

/** The name of the project's domain `domainId`, or null: what a key restricted to it is checked against. */
export async function findProjectDomainName(db: Db, projectId: string, domainId: string): Promise<string | null> {
  const row = (await db('domains').select('name').where({ id: domainId, project_id: projectId }).first()) as
    { name: string } | undefined;
  return row?.name ?? null;
}

export async function touchKeys(db: Db, lastUsed: Map<string, number>): Promise<void> {
  for (const [id, at] of lastUsed) await db('api_keys').where({ id }).update({ last_used_at: at });
}
