import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';

export interface ProjectLimits {
  /** live recipients per UTC day; 0 = unlimited */
  daily: number;
  /** live recipients per UTC month; 0 = unlimited */
  monthly: number;
  /** sending domains; 0 = unlimited */
  domains: number;
  /** address verifications per UTC month; 0 = unlimited */
  verifications: number;
}

export interface SoftBounceSuppression {
  count: number;
  days: number;
}

export interface Project {
  id: string;
  name: string;
  approved: boolean;
  suspended: boolean;
  limits: ProjectLimits;
  /** the suppressions its live mail adds for hard bounces end after this many days (0: never) */
  bounceSuppressionDays: number;
  /** suppress after `count` soft bounces of a lasting reason (a full mailbox, a suspended account) in `days`; null: never */
  softBounceSuppression: SoftBounceSuppression | null;
  /** the pool of outbound.ips its mail leaves from; null: the pool named default */
  ipPool: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ProjectRow {
  id: string;
  name: string;
  approved: number | boolean;
  suspended: number | boolean;
  daily_limit: number;
  monthly_limit: number;
  domain_limit: number;
  verify_limit: number;
  bounce_suppression_days: number;
  soft_bounce_count: number | null;
  soft_bounce_days: number | null;
  ip_pool: string | null;
  created_at: number;
  updated_at: number;
}

export const PROJECT_COLUMNS = [
  'id',
  'name',
  'approved',
  'suspended',
  'daily_limit',
  'monthly_limit',
  'domain_limit',
  'verify_limit',
  'bounce_suppression_days',
  'soft_bounce_count',
  'soft_bounce_days',
  'ip_pool',
  'created_at',
  'updated_at',
] as const;

export function projectFromRow(r: ProjectRow): Project {
  return {
    id: r.id,
    name: r.name,
    approved: Boolean(r.approved),
    suspended: Boolean(r.suspended),
    limits: {
      daily: Number(r.daily_limit),
      monthly: Number(r.monthly_limit),
      domains: Number(r.domain_limit),
      verifications: Number(r.verify_limit),
    },
    bounceSuppressionDays: Number(r.bounce_suppression_days ?? 0),
    softBounceSuppression:
      r.soft_bounce_count == null || r.soft_bounce_days == null
        ? null
        : { count: Number(r.soft_bounce_count), days: Number(r.soft_bounce_days) },
    ipPool: r.ip_pool ?? null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toRow(p: Project): ProjectRow {
  return {
    id: p.id,
    name: p.name,
    approved: p.approved,
    suspended: p.suspended,
    daily_limit: p.limits.daily,
    monthly_limit: p.limits.monthly,
    domain_limit: p.limits.domains,
    verify_limit: p.limits.verifications,
    bounce_suppression_days: p.bounceSuppressionDays,
    soft_bounce_count: p.softBounceSuppression?.count ?? null,
    soft_bounce_days: p.softBounceSuppression?.days ?? null,
    ip_pool: p.ipPool,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

export async function insertProject(db: Db, p: Project): Promise<void> {
  await db('projects').insert(toRow(p));
}

export async function findProject(db: Db, id: string): Promise<Project | null> {
  const row = (await db('projects').select(PROJECT_COLUMNS).where({ id }).first()) as ProjectRow | undefined;
  return row ? projectFromRow(row) : null;
}

// read in every accept's transaction: a prepared statement
const projectsById = prepared<ProjectRow>(
  (db, ids) => db('projects').select(PROJECT_COLUMNS).whereIn('id', oneOf(db, ids)),
  1,
);

export async function findProjectsById(db: Db, ids: string[]): Promise<Map<string, Project>> {
  if (!ids.length) return new Map();
  const rows = await projectsById(db, listParam(ids));
  return new Map(rows.map((r) => [r.id, projectFromRow(r)]));
}

export async function findProjectByName(db: Db, name: string): Promise<Project | null> {
  const row = (await db('projects').select(PROJECT_COLUMNS).where({ name }).first()) as ProjectRow | undefined;
  return row ? projectFromRow(row) : null;
}

export async function listProjects(db: Db): Promise<Project[]> {
  const rows = (await db('projects').select(PROJECT_COLUMNS).orderBy('id', 'asc')) as ProjectRow[];
  return rows.map(projectFromRow);
}

export async function updateProject(db: Db, p: Project): Promise<void> {
  const { id, created_at: _c, ...rest } = toRow(p);
  await db('projects').where({ id }).update(rest);
}
