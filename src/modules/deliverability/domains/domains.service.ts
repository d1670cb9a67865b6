import { randomBytes } from 'node:crypto';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { isUniqueViolation, lockRows } from '../../../store/db.js';
import { findProject, type Project } from '../../account/projects/projects.repo.js';
import { generateDomainKeys } from './dkim-keys.js';
import { isSubdomainOf, normalizeDomainName } from './domain-name.js';
import * as repo from './domains.repo.js';
import type { Domain, TlsMode } from './domains.repo.js';
import { domainKeys } from './domain-keys.repo.js';
import type { DomainDeps, DomainSettings } from './domain-settings.js';
import { DKIM_SELECTORS, type ExpectedRecord } from './records.js';
import type { KeySlot, RotationSettings } from './dkim-rotation.js';
import { domainDmarc } from './domain-dmarc.js';
import { domainInsights } from './insights.service.js';
import { recordsOf, verifyDomain } from './verification.service.js';

export interface DomainInput {
  domain?: string | undefined;
  name?: string | undefined;
  region?: string | undefined;
  open_tracking?: boolean | undefined;
  click_tracking?: boolean | undefined;
  list_unsubscribe?: boolean | undefined;
  custom_return_path?: string | undefined;
  tls?: TlsMode | undefined;
}

export interface DomainPatch {
  track_opens?: boolean | undefined;
  track_clicks?: boolean | undefined;
  open_tracking?: boolean | undefined;
  click_tracking?: boolean | undefined;
  tls?: TlsMode | undefined;
  custom_return_path?: string | undefined;
  list_unsubscribe?: boolean | undefined;
}

export async function createDomain(deps: DomainDeps, project: Project, input: DomainInput): Promise<Domain> {
  const name = domainNameOf(input, deps.domains);
  const now = deps.clock.now();
  // Key generation is CPU work: do it before the transaction, not inside it.
  const keys = await generateDomainKeys(now);
  const domain: Domain = {
    id: newId('domain', now),
    projectId: project.id,
    name,
    region: input.region ?? null,
    status: 'pending',
    failureReason: null,
    verifiedAt: null,
    lastCheckedAt: null,
    openTracking: input.open_tracking ?? false,
    clickTracking: input.click_tracking ?? false,
    listUnsubscribe: input.list_unsubscribe ?? false,
    tls: input.tls ?? 'opportunistic',
    returnPath: input.custom_return_path ?? 'send',
    dkimToken: randomBytes(10).toString('hex'),
    activeSelector: DKIM_SELECTORS[0],
    dkimActivatedAt: now,
    checks: {},
    createdAt: now,
    updatedAt: now,
  };
  try {
    return await deps.store.tx(async (trx) => {
      // The project's row lock serialises its creations (PostgreSQL, several processes): without
      // it two requests at the limit both count below it and both insert.
      await lockRows(trx, 'projects', [project.id]);
      const existing = await repo.findDomainByName(trx, name);
      if (existing) throw alreadyRegistered(existing, project);
      // the limit as stored now: the caller's copy of the project may be a moment old (key cache)
      const limit = (await findProject(trx, project.id))?.limits.domains ?? project.limits.domains;
      if (limit > 0 && (await repo.countDomains(trx, project.id)) >= limit) {
        throw apiError('plan_limit_reached', `this project may have at most ${limit} domain${limit === 1 ? '' : 's'}`);
      }
      await repo.insertDomain(trx, domain, keys);
      return domain;
    });
  } catch (e) {
    // Another project (no lock in common) inserted the name between our look-up and our insert:
    // the unique index on domains.name decides, and the loser gets the answer the look-up gives.
    if (!isUniqueViolation(e)) throw e;
    const winner = await repo.findDomainByName(deps.store.knex, name);
    if (!winner) throw e;
    throw alreadyRegistered(winner, project);
  }
}

/** interface §4.2 409; a duplicate within the project is the same conflict, told apart in the message. */
function alreadyRegistered(existing: Domain, project: Project) {
  return apiError(
    'domain_already_registered',
    existing.projectId === project.id
      ? `${existing.name} is already registered in this project (${existing.id})`
      : `${existing.name} is registered by another project`,
  );
}

function domainNameOf(input: DomainInput, s: DomainSettings): string {
  const given = input.domain ?? input.name;
  const field = input.domain !== undefined ? 'domain' : 'name';
  if (given === undefined) throw validationError('domain', 'is required');
  const checked = normalizeDomainName(given);
  if (!checked.ok) throw validationError(field, checked.reason);
  if (input.domain !== undefined && input.name !== undefined) {
    const other = normalizeDomainName(input.name);
    if (!other.ok || other.name !== checked.name)
      throw validationError('name', 'must be the same domain as domain when both are given');
  }
  for (const reserved of [s.testDomain, s.zone, s.hostname]) {
    if (isSubdomainOf(checked.name, reserved))
      throw validationError(field, `${checked.name} is reserved by this appliance`);
  }
  return checked.name;
}

export async function getDomain(deps: Pick<DomainDeps, 'store'>, projectId: string, id: string): Promise<Domain> {
  const d = await repo.findDomain(deps.store.knex, projectId, id);
  if (!d) throw notFound(`domain ${id}`);
  return d;
}

/** A domain of any project: the operator's view (CLI). */
export async function getDomainById(deps: Pick<DomainDeps, 'store'>, id: string): Promise<Domain> {
  const d = await repo.findDomainById(deps.store.knex, id);
  if (!d) throw notFound(`domain ${id}`);
  return d;
}

/** The operator's view (CLI): a domain by id (dom_…) or by name, of any project. */
export async function getDomainByIdOrName(deps: Pick<DomainDeps, 'store'>, given: string): Promise<Domain> {
  const name = normalizeDomainName(given);
  const d = given.startsWith('dom_')
    ? await repo.findDomainById(deps.store.knex, given)
    : name.ok
      ? await repo.findDomainByName(deps.store.knex, name.name)
      : null;
  if (!d) throw notFound(`domain ${given}`);
  return d;
}

export function listDomains(deps: Pick<DomainDeps, 'store'>, projectId: string): Promise<Domain[]> {
  return repo.listDomains(deps.store.knex, projectId);
}

export async function updateDomain(
  deps: DomainDeps,
  projectId: string,
  id: string,
  patch: DomainPatch,
): Promise<Domain> {
  const opens = agree(patch.open_tracking, patch.track_opens, 'track_opens');
  const clicks = agree(patch.click_tracking, patch.track_clicks, 'track_clicks');
  return deps.store.tx(async (trx) => {
    const d = await repo.findDomain(trx, projectId, id);
    if (!d) throw notFound(`domain ${id}`);
    const next: Domain = {
      ...d,
      openTracking: opens ?? d.openTracking,
      clickTracking: clicks ?? d.clickTracking,
      listUnsubscribe: patch.list_unsubscribe ?? d.listUnsubscribe,
      tls: patch.tls ?? d.tls,
      returnPath: patch.custom_return_path ?? d.returnPath,
      updatedAt: deps.clock.now(),
    };
    if (next.returnPath !== d.returnPath) {
      // The return-path records moved to another name: what was seen at the old one says nothing.
      const { ['return_path:mx']: _mx, ['spf:txt']: _spf, ...rest } = d.checks;
      next.checks = rest;
    }
    await repo.updateDomain(trx, next);
    return next;
  });
}

/** Both spellings of the interface (open_tracking / track_opens) may be sent, but must not disagree. */
function agree(a: boolean | undefined, b: boolean | undefined, field: string): boolean | undefined {
  if (a !== undefined && b !== undefined && a !== b)
    throw validationError(field, 'contradicts the other spelling of the same setting');
  return a ?? b;
}

export async function deleteDomain(deps: Pick<DomainDeps, 'store'>, projectId: string, id: string): Promise<Domain> {
  return deps.store.tx(async (trx) => {
    const d = await repo.findDomain(trx, projectId, id);
    if (!d) throw notFound(`domain ${id}`);
    await repo.deleteDomain(trx, id);
    return d;
  });
}

/** A domain with what its resource shows beside it (domains.presenter.ts presentDomain). */
export interface DomainView {
  domain: Domain;
  /** the records to publish; the domain's checks hold the last check of each */
  records: ExpectedRecord[];
  keys: readonly KeySlot[];
  /** http.public_url is set, so tracking links can be served */
  trackingAvailable: boolean;
  /** dkim.*: when the active key is replaced */
  rotation: RotationSettings;
}

/** The domain as the API and the CLI show it: with the records to publish and the last check of each. */
export async function describeDomain(deps: Pick<DomainDeps, 'store' | 'domains'>, d: Domain): Promise<DomainView> {
  const keys = await domainKeys(deps.store.knex, d.id);
  return {
    domain: d,
    records: await recordsOf(deps, d, keys),
    keys,
    trackingAvailable: deps.domains.trackingAvailable,
    rotation: deps.domains.dkim,
  };
}

/** What the /v1/domains routes use. */
export function domainService(deps: DomainDeps) {
  return {
    create: (project: Project, input: DomainInput) => createDomain(deps, project, input),
    get: (projectId: string, id: string) => getDomain(deps, projectId, id),
    list: (projectId: string) => listDomains(deps, projectId),
    update: (projectId: string, id: string, patch: DomainPatch) => updateDomain(deps, projectId, id, patch),
    delete: (projectId: string, id: string) => deleteDomain(deps, projectId, id),
    verify: (d: Domain) => verifyDomain(deps, d),
    insights: (d: Domain, days: number) => domainInsights(deps, d, days),
    dmarc: (d: Domain, days: number) => domainDmarc(deps, d, days),
    describe: (d: Domain) => describeDomain(deps, d),
  };
}

export type DomainService = ReturnType<typeof domainService>;
