import { randomBytes } from 'node:crypto';
import { apiError, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import { isUniqueViolation, lockRows, type Store } from '../../store/store.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { checkRecords, type RecordCheck } from '../../dns/checks.js';
import { findProject, type Project } from '../projects/projects.repo.js';
import { generateDomainKeys } from './dkim-keys.js';
import { isSubdomainOf, normalizeDomainName } from './domain-name.js';
import { nextStatus, type DomainStatus } from './domain-state.js';
import { computeInsights, insightSetup } from './insights.js';
import { insightCounts } from './insights.repo.js';
import * as repo from './domains.repo.js';
import type { Domain, StoredCheck, TlsMode } from './domains.repo.js';
import { DKIM_SELECTORS, expectedRecords, type ExpectedRecord } from './records.js';

const DAY_MS = 86_400_000;

export interface DomainSettings {
  /** dns.zone */
  zone: string;
  /** outbound.hostname */
  hostname: string;
  /** test_domain: reserved for simulated recipients */
  testDomain: string;
  /** http.public_url is set, so tracking links can be served */
  trackingAvailable: boolean;
  /** per DNS check */
  checkTimeoutMs: number;
}

export interface DomainDeps {
  store: Store;
  clock: Clock;
  resolver: DnsResolver;
  domains: DomainSettings;
}

export interface DomainInput {
  domain?: string | undefined;
  name?: string | undefined;
  region?: string | undefined;
  open_tracking?: boolean | undefined;
  click_tracking?: boolean | undefined;
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
}

export async function createDomain(deps: DomainDeps, project: Project, input: DomainInput): Promise<Domain> {
  const name = domainNameOf(input, deps.domains);
  // Key generation is CPU work: do it before the transaction, not inside it.
  const keys = await generateDomainKeys();
  const now = deps.clock.now();
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
    tls: input.tls ?? 'opportunistic',
    returnPath: input.custom_return_path ?? 'send',
    dkimToken: randomBytes(10).toString('hex'),
    activeSelector: DKIM_SELECTORS[0],
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
    existing.projectId === project.id ? `${existing.name} is already registered in this project (${existing.id})` : `${existing.name} is registered by another project`,
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
    if (!other.ok || other.name !== checked.name) throw validationError('name', 'must be the same domain as domain when both are given');
  }
  for (const reserved of [s.testDomain, s.zone, s.hostname]) {
    if (isSubdomainOf(checked.name, reserved)) throw validationError(field, `${checked.name} is reserved by this appliance`);
  }
  return checked.name;
}

export async function getDomain(deps: Pick<DomainDeps, 'store'>, projectId: string, id: string): Promise<Domain> {
  const d = await repo.findDomain(deps.store.knex, projectId, id);
  if (!d) throw notFound(`domain ${id}`);
  return d;
}

export function listDomains(deps: Pick<DomainDeps, 'store'>, projectId: string): Promise<Domain[]> {
  return repo.listDomains(deps.store.knex, projectId);
}

export async function updateDomain(deps: DomainDeps, projectId: string, id: string, patch: DomainPatch): Promise<Domain> {
  const opens = agree(patch.open_tracking, patch.track_opens, 'track_opens');
  const clicks = agree(patch.click_tracking, patch.track_clicks, 'track_clicks');
  return deps.store.tx(async (trx) => {
    const d = await repo.findDomain(trx, projectId, id);
    if (!d) throw notFound(`domain ${id}`);
    const next: Domain = {
      ...d,
      openTracking: opens ?? d.openTracking,
      clickTracking: clicks ?? d.clickTracking,
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
  if (a !== undefined && b !== undefined && a !== b) throw validationError(field, 'contradicts the other spelling of the same setting');
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

export async function recordsOf(deps: Pick<DomainDeps, 'store' | 'domains'>, d: Domain): Promise<ExpectedRecord[]> {
  const keys = await repo.domainKeys(deps.store.knex, d.id);
  return expectedRecords({
    domain: d.name,
    returnPath: d.returnPath,
    token: d.dkimToken,
    zone: deps.domains.zone,
    hostname: deps.domains.hostname,
    publicKeys: Object.fromEntries(keys.map((k) => [k.selector, k.publicKey])),
  });
}

/**
 * Read public DNS for every record of the domain (in parallel, bounded by a
 * timeout), then record the results and move the domain per LIFECYCLE. The
 * lookups happen outside any transaction.
 */
export async function verifyDomain(deps: DomainDeps, d: Domain): Promise<Domain> {
  const records = await recordsOf(deps, d);
  const results = await checkRecords(records, deps.resolver, deps.domains.checkTimeoutMs);
  return deps.store.tx(async (trx) => {
    const current = await repo.findDomainById(trx, d.id);
    if (!current) throw notFound(`domain ${d.id}`);
    const next = applyCheck(current, stillCurrent(records, d, current), results, deps.clock.now());
    await repo.updateDomain(trx, next);
    return next;
  });
}

/**
 * The records checked for `checked` that still describe `current`. A PATCH
 * of the return path while the lookups ran moved the MX and SPF records to
 * another name: what was seen at the old name must not be stored as the
 * verdict on the new one.
 */
export function stillCurrent(records: ExpectedRecord[], checked: Pick<Domain, 'returnPath'>, current: Pick<Domain, 'returnPath'>): ExpectedRecord[] {
  if (checked.returnPath === current.returnPath) return records;
  return records.filter((r) => r.purpose !== 'return_path' && r.purpose !== 'spf');
}

export function applyCheck(d: Domain, records: ExpectedRecord[], results: Map<string, RecordCheck>, now: number): Domain {
  const checks: Record<string, StoredCheck> = { ...d.checks };
  for (const r of records) {
    const res = results.get(r.key);
    if (res && res.dns !== 'error') checks[r.key] = { dns: res.dns, seen: res.seen };
  }
  const required = records.filter((r) => r.required);
  const allRequiredFound = required.every((r) => checks[r.key]?.dns === 'found');
  const unanswered = required.filter((r) => results.get(r.key)?.dns === 'error');
  const inconclusive = unanswered.length > 0;
  const status: DomainStatus = nextStatus(d.status, { allRequiredFound, inconclusive }, now - d.createdAt);
  const missing = required.filter((r) => !unanswered.includes(r) && checks[r.key]?.dns !== 'found');
  return {
    ...d,
    checks,
    status,
    lastCheckedAt: now,
    verifiedAt: status === 'verified' && d.status !== 'verified' ? now : d.verifiedAt,
    failureReason: status === 'verified' ? null : (failureReason(missing, unanswered, checks, results) ?? d.failureReason),
    updatedAt: now,
  };
}

/**
 * failure_reason names the records at fault. A record whose lookup failed
 * (timeout, SERVFAIL, unreachable resolver) was not seen missing: saying
 * "not found" would send the customer to fix DNS that may well be right.
 */
function failureReason(missing: ExpectedRecord[], unanswered: ExpectedRecord[], checks: Record<string, StoredCheck>, results: Map<string, RecordCheck>): string | null {
  const parts: string[] = [];
  if (missing.length) parts.push(`required DNS records not found: ${missing.map((r) => `${r.name} (${r.type}: ${checks[r.key]?.dns ?? 'unchecked'})`).join(', ')}`);
  if (unanswered.length) {
    const why = results.get(unanswered[0]!.key)?.seen[0]?.replace(/^lookup failed: /, '');
    parts.push(`DNS lookups failed${why ? ` (${why})` : ''}, so these required records could not be checked: ${unanswered.map((r) => `${r.name} (${r.type})`).join(', ')}`);
  }
  return parts.length ? parts.join('; ') : null;
}

/** interface §2.3 over the last `days` days of the domain's live mail. */
export async function domainInsights(deps: Pick<DomainDeps, 'store' | 'clock' | 'domains'>, d: Domain, days: number) {
  const counts = await insightCounts(deps.store.reader, d.projectId, d.name, deps.clock.now() - days * DAY_MS);
  return computeInsights(d.name, days, counts, insightSetup(d, deps.domains.trackingAvailable));
}

/** The jobs.domain_recheck job: pending ones (to verify or give up) and live ones (to notice lost records). */
export async function recheckDomains(deps: DomainDeps, onError: (d: Domain, e: unknown) => void): Promise<number> {
  const domains = await repo.listDomainsInStatus(deps.store.knex, ['pending', 'verified', 'temporary_failure']);
  let changed = 0;
  for (const d of domains) {
    try {
      const after = await verifyDomain(deps, d);
      if (after.status !== d.status) changed++;
    } catch (e) {
      onError(d, e);
    }
  }
  return changed;
}
