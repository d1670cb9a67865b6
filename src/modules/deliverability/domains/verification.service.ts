import { dnsChecks } from '../../../log/metrics.js';
import { notFound } from '../../../lib/errors.js';
import { checkRecords } from '../../../dns/checks.js';
import * as repo from './domains.repo.js';
import type { Domain } from './domains.repo.js';
import { domainKeys, type DomainKey } from './domain-keys.repo.js';
import type { DomainDeps } from './domain-settings.js';
import { applyCheck, stillCurrent } from './verification.js';
import { expectedRecords, type ExpectedRecord } from './records.js';

// Checking a domain's records in public DNS: the lookups and the store around
// the pure verdict of verification.ts.

export async function recordsOf(
  deps: Pick<DomainDeps, 'store' | 'domains'>,
  d: Domain,
  keys?: DomainKey[],
): Promise<ExpectedRecord[]> {
  keys ??= await domainKeys(deps.store.knex, d.id);
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
