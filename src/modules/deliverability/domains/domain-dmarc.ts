import { iso } from '../../../lib/time.js';
import { outboundIps } from '../blocklists/blocklists.service.js';
import { rowsSince } from '../../receiving/dmarc/dmarc.repo.js';
import { summarize, type DmarcSummary } from '../../receiving/dmarc/dmarc-summary.js';
import type { Domain } from './domains.repo.js';
import type { Clock } from '../../../lib/time.js';
import type { DnsResolver } from '../../../dns/resolver.js';
import type { Store } from '../../../store/store.js';
import { DKIM_SELECTORS, dmarcReportAddress } from './records.js';

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

/** GET /v1/domains/{id}/dmarc */
export async function domainDmarc(deps: DmarcViewDeps, d: Domain, days: number) {
  const s = await dmarcSummaryOf(deps, d, days);
  return {
    object: 'domain_dmarc' as const,
    domain: d.name,
    window_days: days,
    report_address: dmarcReportAddress(d.dkimToken, d.returnPath, d.name),
    ...s,
    first_report_begin: iso(s.first_report_begin),
    last_report_end: iso(s.last_report_end),
  };
}
