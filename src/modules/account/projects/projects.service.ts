import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import { isUniqueViolation } from '../../../store/db.js';
import { type Store } from '../../../store/store.js';
import {
  findProject,
  findProjectByName,
  insertProject,
  listProjects as listAll,
  updateProject,
  type Project,
  type ProjectLimits,
  type SoftBounceSuppression,
} from './projects.repo.js';

export interface ProjectDeps {
  store: Store;
  clock: Clock;
}

export interface ProjectSettings {
  approved?: boolean;
  suspended?: boolean;
  limits?: Partial<ProjectLimits>;
  /** 0: the suppressions of hard bounces never end */
  bounceSuppressionDays?: number | undefined;
  /** "N/Md" (N soft bounces in M days) or "off" */
  softBounceSuppression?: string | undefined;
  /** a pool of outbound.ips, or "default" for the default pool */
  ipPool?: string | undefined;
}

export async function createProject(deps: ProjectDeps, input: { name: string } & ProjectSettings): Promise<Project> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) throw validationError('name', 'must be 1 to 200 characters');
  checkLimits(input.limits);
  const now = deps.clock.now();
  const project: Project = {
    id: newId('project', now),
    name,
    approved: input.approved ?? false,
    suspended: input.suspended ?? false,
    limits: { daily: 0, monthly: 0, domains: 0, verifications: 0, ...input.limits },
    bounceSuppressionDays: checkDays(input.bounceSuppressionDays) ?? 0,
    softBounceSuppression: parseSoftBounceSuppression(input.softBounceSuppression) ?? null,
    ipPool: parseIpPool(input.ipPool) ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const taken = () => apiError('conflict', `a project named "${name}" already exists`);
  try {
    return await deps.store.tx(async (trx) => {
      if (await findProjectByName(trx, name)) throw taken();
      await insertProject(trx, project);
      return project;
    });
  } catch (e) {
    // another process created it between the look and the insert
    if (isUniqueViolation(e)) throw taken();
    throw e;
  }
}

export function listProjects(deps: ProjectDeps): Promise<Project[]> {
  return listAll(deps.store.knex);
}

export async function getProject(deps: ProjectDeps, id: string): Promise<Project> {
  const p = await findProject(deps.store.knex, id);
  if (!p) throw notFound(`project ${id}`);
  return p;
}

export async function setProject(deps: ProjectDeps, id: string, settings: ProjectSettings): Promise<Project> {
  checkLimits(settings.limits);
  const soft = parseSoftBounceSuppression(settings.softBounceSuppression);
  const pool = parseIpPool(settings.ipPool);
  return deps.store.tx(async (trx) => {
    const p = await findProject(trx, id);
    if (!p) throw notFound(`project ${id}`);
    const next: Project = {
      ...p,
      approved: settings.approved ?? p.approved,
      suspended: settings.suspended ?? p.suspended,
      limits: { ...p.limits, ...stripUndefined(settings.limits ?? {}) },
      bounceSuppressionDays: checkDays(settings.bounceSuppressionDays) ?? p.bounceSuppressionDays,
      softBounceSuppression: soft === undefined ? p.softBounceSuppression : soft,
      ipPool: pool === undefined ? p.ipPool : pool,
      updatedAt: deps.clock.now(),
    };
    await updateProject(trx, next);
    return next;
  });
}

function checkDays(days: number | undefined): number | undefined {
  if (days !== undefined && (!Number.isInteger(days) || days < 0 || days > 3650))
    throw validationError('bounce_suppression_days', 'must be a whole number of days from 0 (never) to 3650');
  return days;
}

/**
 * `--soft-bounce-suppression`: "N/Md", N soft bounces of a lasting reason within M days suppress the
 * address (e.g. "3/30d"); "off" ends it. Undefined: unchanged.
 */
export function parseSoftBounceSuppression(text: string | undefined): SoftBounceSuppression | null | undefined {
  if (text === undefined) return undefined;
  if (text.trim().toLowerCase() === 'off') return null;
  const m = /^\s*(\d{1,3})\s*\/\s*(\d{1,3})\s*d\s*$/i.exec(text);
  const count = Number(m?.[1]);
  const days = Number(m?.[2]);
  if (!m || count < 1 || count > 100 || days < 1 || days > 365)
    throw validationError(
      'soft_bounce_suppression',
      'must be "N/Md" (N soft bounces from 1 to 100 within M days from 1 to 365, e.g. "3/30d") or "off"',
    );
  return { count, days };
}

/** `--ip-pool`: a pool name of outbound.ips; "default" is the default pool (stored as none). Undefined: unchanged. */
function parseIpPool(name: string | undefined): string | null | undefined {
  if (name === undefined) return undefined;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name))
    throw validationError('ip_pool', 'must be a pool name of outbound.ips: 1 to 64 letters, digits, ".", "_" or "-"');
  return name === 'default' ? null : name;
}

function checkLimits(limits: Partial<ProjectLimits> | undefined): void {
  for (const [k, v] of Object.entries(limits ?? {})) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 2_000_000_000))
      throw validationError(`limits.${k}`, 'must be a whole number from 0 (unlimited) up');
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
