import { outboundIps } from '../blocklists/blocklists.service.js';
import { rowsSince } from '../../receiving/dmarc/dmarc.repo.js';
import { summarize, type DmarcSummary } from '../../receiving/dmarc/dmarc-summary.js';
import type { Domain } from './domains.repo.js';
import type { Clock } from '../../../lib/time.js';
import type { DnsResolver } from '../../../dns/resolver.js';
import type { Store } from '../../../store/store.js';
import { DKIM_SELECTORS } from './records.js';

const DAY_MS = 86_400_000;

/** What the domain module's deps give this view: the store, the clock, DNS, and the appliance's outbound addresses. */
interface DmarcViewDeps {
  store: Store;
  clock: Clock;
  resolver: DnsResolver;
  domains: { outboundIps: readonly string[]; hostname: string };
}

/** The reports of the last `days` days, read against what is this appliance's mail. */
export async function dmarcSummaryOf(deps: DmarcViewDeps, d: Domain, days: number): Promise<DmarcSummary> {
  const rows = await rowsSince(deps.store.reader, d.id, deps.clock.now() - days * DAY_MS);
  // without its addresses (DNS down), the appliance's mail is still told by its DKIM selectors
  const ips = await outboundIps({
    resolver: deps.resolver,
    blocklists: { ips: deps.domains.outboundIps, hostname: deps.domains.hostname, lists: [] },
  }).catch(() => []);
  return summarize(rows, { domain: d.name, ips: new Set(ips), selectors: DKIM_SELECTORS });
}

/** What GET /v1/domains/{id}/dmarc shows: the domain and its reports' summary over the last `days` days. */
export interface DomainDmarc {
  domain: Domain;
  days: number;
  summary: DmarcSummary;
}

/** GET /v1/domains/{id}/dmarc */
export async function domainDmarc(deps: DmarcViewDeps, d: Domain, days: number): Promise<DomainDmarc> {
  return { domain: d, days, summary: await dmarcSummaryOf(deps, d, days) };
}
