import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import type { DomainStatus } from './domain-state.js';
import { insertKeys, type DomainKey } from './domain-keys.repo.js';

export interface StoredCheck {
  dns: 'found' | 'missing' | 'mismatch';
  seen: string[];
}

export type TlsMode = 'opportunistic' | 'enforced';

export interface Domain {
  id: string;
  projectId: string;
  name: string;
  region: string | null;
  status: DomainStatus;
  failureReason: string | null;
  verifiedAt: number | null;
  lastCheckedAt: number | null;
  openTracking: boolean;
  clickTracking: boolean;
  /** every send from it asks for one-click unsubscribe (docs/unsubscribe.md) */
  listUnsubscribe: boolean;
  tls: TlsMode;
  returnPath: string;
  dkimToken: string;
  activeSelector: string;
  /** when signing moved to the active selector's key (dkim-rotation.ts) */
  dkimActivatedAt: number;
  checks: Record<string, StoredCheck>;
  createdAt: number;
  updatedAt: number;
}

interface DomainRow {
  id: string;
  project_id: string;
  name: string;
  region: string | null;
  status: string;
  failure_reason: string | null;
  verified_at: number | null;
  last_checked_at: number | null;
  open_tracking: number | boolean;
  click_tracking: number | boolean;
  list_unsubscribe: number | boolean;
  tls: string;
  return_path: string;
  dkim_token: string;
  active_selector: string;
  dkim_activated_at: number | null;
  checks: string | null;
  created_at: number;
  updated_at: number;
}

const COLUMNS = [
  'id',
  'project_id',
  'name',
  'region',
  'status',
  'failure_reason',
  'verified_at',
  'last_checked_at',
  'open_tracking',
  'click_tracking',
  'list_unsubscribe',
  'tls',
  'return_path',
  'dkim_token',
  'active_selector',
  'dkim_activated_at',
  'checks',
  'created_at',
  'updated_at',
] as const;

const num = (v: number | null) => (v == null ? null : Number(v));

function fromRow(r: DomainRow): Domain {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    region: r.region,
    status: r.status as DomainStatus,
    failureReason: r.failure_reason,
    verifiedAt: num(r.verified_at),
    lastCheckedAt: num(r.last_checked_at),
    openTracking: Boolean(r.open_tracking),
    clickTracking: Boolean(r.click_tracking),
    listUnsubscribe: Boolean(r.list_unsubscribe),
    tls: r.tls as TlsMode,
    returnPath: r.return_path,
    dkimToken: r.dkim_token,
    activeSelector: r.active_selector,
    dkimActivatedAt: Number(r.dkim_activated_at ?? r.created_at),
    checks: r.checks ? (JSON.parse(r.checks) as Record<string, StoredCheck>) : {},
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(d: Domain): DomainRow {
  return {
    id: d.id,
    project_id: d.projectId,
    name: d.name,
    region: d.region,
    status: d.status,
    failure_reason: d.failureReason,
    verified_at: d.verifiedAt,
    last_checked_at: d.lastCheckedAt,
    open_tracking: d.openTracking,
    click_tracking: d.clickTracking,
    list_unsubscribe: d.listUnsubscribe,
    tls: d.tls,
    return_path: d.returnPath,
    dkim_token: d.dkimToken,
    active_selector: d.activeSelector,
    dkim_activated_at: d.dkimActivatedAt,
    checks: JSON.stringify(d.checks),
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export async function insertDomain(db: Db, d: Domain, keys: DomainKey[]): Promise<void> {
  await db('domains').insert(toRow(d));
  await insertKeys(db, d.id, keys);
}

/**
 * Settings and check results. The signing key (active_selector,
 * dkim_activated_at) is left out: only a rotation's switch writes it
 * (setActiveKey), so that a re-check or a PATCH that read the domain before
 * a switch cannot put the old selector back.
 */
export async function updateDomain(db: Db, d: Domain): Promise<void> {
  const {
    id,
    project_id: _p,
    created_at: _c,
    dkim_token: _t,
    active_selector: _s,
    dkim_activated_at: _a,
    ...rest
  } = toRow(d);
  await db('domains').where({ id }).update(rest);
}

export async function setActiveKey(db: Db, id: string, selector: string, activatedAt: number): Promise<void> {
  await db('domains')
    .where({ id })
    .update({ active_selector: selector, dkim_activated_at: activatedAt, updated_at: activatedAt });
}

export async function deleteDomain(db: Db, id: string): Promise<void> {
  await db('domains').where({ id }).delete();
}

/** A domain of this project (another project's id is not found). */
export async function findDomain(db: Db, projectId: string, id: string): Promise<Domain | null> {
  const row = (await db('domains').select(COLUMNS).where({ id, project_id: projectId }).first()) as
    DomainRow | undefined;
  return row ? fromRow(row) : null;
}

export async function findDomainById(db: Db, id: string): Promise<Domain | null> {
  const row = (await db('domains').select(COLUMNS).where({ id }).first()) as DomainRow | undefined;
  return row ? fromRow(row) : null;
}

// the MX listener asks for every envelope recipient: a prepared statement
const byName = prepared<DomainRow>(
  (db, name) =>
    db('domains')
      .select(COLUMNS)
      .where('name', name as string),
  1,
);

/** The domain whose DKIM token (the label its CNAMEs and its DMARC report address carry) this is. */
export async function findDomainByToken(db: Db, token: string): Promise<Domain | null> {
  const row = (await db('domains').select(COLUMNS).where({ dkim_token: token }).first()) as DomainRow | undefined;
  return row ? fromRow(row) : null;
}

export async function findDomainByName(db: Db, name: string): Promise<Domain | null> {
  const row = (await byName(db, name))[0];
  return row ? fromRow(row) : null;
}

export async function listDomains(db: Db, projectId: string): Promise<Domain[]> {
  const rows = (await db('domains')
    .select(COLUMNS)
    .where({ project_id: projectId })
    .orderBy('id', 'desc')) as DomainRow[];
  return rows.map(fromRow);
}

/** "project|domain" of each of these domain names that is verified, in the project that has it, with whether it asks for one-click unsubscribe. */
// read in every accept's transaction: a prepared statement
const verifiedNamed = prepared<{ project_id: string; name: string; list_unsubscribe: number | boolean }>(
  (db, names, verified) =>
    db('domains')
      .select('project_id', 'name', 'list_unsubscribe')
      .whereIn('name', oneOf(db, names))
      .andWhere('status', verified as string),
  2,
);

export async function verifiedDomainsOf(db: Db, names: string[]): Promise<Map<string, { listUnsubscribe: boolean }>> {
  if (!names.length) return new Map();
  const rows = await verifiedNamed(db, listParam(names), 'verified');
  return new Map(rows.map((r) => [`${r.project_id}|${r.name}`, { listUnsubscribe: Boolean(r.list_unsubscribe) }]));
}

export async function listDomainsInStatus(db: Db, statuses: readonly DomainStatus[]): Promise<Domain[]> {
  const rows = (await db('domains').select(COLUMNS).whereIn('status', statuses).orderBy('id', 'asc')) as DomainRow[];
  return rows.map(fromRow);
}

export async function countDomains(db: Db, projectId: string): Promise<number> {
  const row = (await db('domains').where({ project_id: projectId }).count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/**
 * The domains the rotation job has something to do for: a key pending or
 * retiring, or a verified domain whose active key began signing before
 * `activatedBefore` (null: rotation by age is off).
 */
export async function domainsToRotate(db: Db, activatedBefore: number | null): Promise<Domain[]> {
  const q = db('domains')
    .select(COLUMNS)
    .whereIn('id', db('domain_keys').select('domain_id').whereIn('state', ['pending', 'retiring']));
  if (activatedBefore !== null)
    q.orWhere((w) => {
      w.where('status', 'verified').andWhere('dkim_activated_at', '<=', activatedBefore);
    });
  return ((await q.orderBy('id')) as DomainRow[]).map(fromRow);
}
