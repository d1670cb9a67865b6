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
  return deps.store.tx(async (trx) => {
    const p = await findProject(trx, id);
    if (!p) throw notFound(`project ${id}`);
    const next: Project = {
      ...p,
      approved: settings.approved ?? p.approved,
      suspended: settings.suspended ?? p.suspended,
      limits: { ...p.limits, ...stripUndefined(settings.limits ?? {}) },
      bounceSuppressionDays: checkDays(settings.bounceSuppressionDays) ?? p.bounceSuppressionDays,
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

function checkLimits(limits: Partial<ProjectLimits> | undefined): void {
  for (const [k, v] of Object.entries(limits ?? {})) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 2_000_000_000))
      throw validationError(`limits.${k}`, 'must be a whole number from 0 (unlimited) up');
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
