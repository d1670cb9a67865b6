import { randomBytes } from 'node:crypto';
import { dnsChecks } from '../../log/metrics.js';
import { apiError, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import { isUniqueViolation, lockRows } from '../../store/db.js';
import { type Store } from '../../store/store.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { checkRecords } from '../../dns/checks.js';
import { findProject, type Project } from '../projects/projects.repo.js';
import { generateDomainKeys } from './dkim-keys.js';
import { isSubdomainOf, normalizeDomainName } from './domain-name.js';
import { computeInsights, insightSetup } from './insights.js';
import { insightCounts, insightDaily } from './insights.repo.js';
import * as repo from './domains.repo.js';
import type { Domain, TlsMode } from './domains.repo.js';
import { applyCheck, stillCurrent } from './verification.js';
import { DKIM_SELECTORS, expectedRecords, type ExpectedRecord } from './records.js';
import { presentDomain } from './domains.presenter.js';
import { nextRotationAt, presentDkim, type RotationSettings } from './dkim-rotation.js';
import { iso } from '../../lib/time.js';
import { listingsOf } from '../blocklists/blocklists.repo.js';
import { dmarcTotals } from '../dmarc/dmarc-summary.js';
import { dmarcSummaryOf, domainDmarc } from './domain-dmarc.js';

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
  /** dkim.*: key rotation */
  dkim: RotationSettings;
  /** blocklists.ips: the appliance's outbound addresses when configured (else outbound.hostname's) */
  outboundIps: readonly string[];
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

/** A domain of any project: the operator's view (CLI). */
export async function getDomainById(deps: Pick<DomainDeps, 'store'>, id: string): Promise<Domain> {
  const d = await repo.findDomainById(deps.store.knex, id);
  if (!d) throw notFound(`domain ${id}`);
  return d;
}

/** The operator's view (CLI): a domain by id (dom_…) or by name, of any project. */
export async function getDomainByIdOrName(deps: Pick<DomainDeps, 'store'>, given: string): Promise<Domain> {
  const name = normalizeDomainName(given);
  const d = given.startsWith('dom_') ? await repo.findDomainById(deps.store.knex, given) : name.ok ? await repo.findDomainByName(deps.store.knex, name.name) : null;
  if (!d) throw notFound(`domain ${given}`);
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

export async function recordsOf(deps: Pick<DomainDeps, 'store' | 'domains'>, d: Domain, keys?: repo.DomainKey[]): Promise<ExpectedRecord[]> {
  keys ??= await repo.domainKeys(deps.store.knex, d.id);
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
  for (const r of results.values()) dnsChecks.inc({ result: r.dns });
  return deps.store.tx(async (trx) => {
    const current = await repo.findDomainById(trx, d.id);
    if (!current) throw notFound(`domain ${d.id}`);
    const next = applyCheck(current, stillCurrent(records, d, current), results, deps.clock.now());
    await repo.updateDomain(trx, next);
    return next;
  });
}

/** interface §2.3 over the last `days` days of the domain's live mail. */
export async function domainInsights(deps: Pick<DomainDeps, 'store' | 'clock' | 'domains' | 'resolver'>, d: Domain, days: number) {
  const today = Math.floor(deps.clock.now() / DAY_MS);
  // the window's first whole UTC day on: what the daily series shows (the totals keep their rolling window)
  const since = deps.clock.now() - days * DAY_MS;
  const [counts, daily, listings, dmarc] = await Promise.all([
    insightCounts(deps.store.reader, d.projectId, d.name, since),
    insightDaily(deps.store.reader, d.projectId, d.name, (today - days + 1) * DAY_MS),
    listingsOf(deps.store.reader, d.name),
    dmarcSummaryOf(deps, d, days),
  ]);
  const blocklisted = listings.map((c) => ({ target: c.target, kind: c.kind, list: c.zone, since: iso(c.since) }));
  const setup = { ...insightSetup(d, deps.domains.trackingAvailable), dkim_key: { active_selector: d.activeSelector, next_rotation_at: iso(nextRotationAt(d, deps.domains.dkim)) }, blocklisted };
  return computeInsights(d.name, days, counts, setup, { counts: daily, today }, dmarcTotals(dmarc));
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

/** The domain as the API and the CLI show it: with the records to publish and the last check of each. */
export async function describeDomain(deps: Pick<DomainDeps, 'store' | 'domains'>, d: Domain) {
  const keys = await repo.domainKeys(deps.store.knex, d.id);
  return presentDomain(d, await recordsOf(deps, d, keys), deps.domains.trackingAvailable, presentDkim(d, keys, deps.domains.dkim));
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
