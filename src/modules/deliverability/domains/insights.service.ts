import { iso } from '../../../lib/time.js';
import { listingsOf } from '../blocklists/blocklists.repo.js';
import { dmarcTotals } from '../../receiving/dmarc/dmarc-summary.js';
import type { Domain } from './domains.repo.js';
import type { DomainDeps } from './domain-settings.js';
import { computeInsights, insightSetup } from './insights.js';
import { bouncesByReason, insightCounts, insightDaily } from './insights.repo.js';
import { nextRotationAt } from './dkim-rotation.js';
import { dmarcSummaryOf } from './domain-dmarc.js';

const DAY_MS = 86_400_000;

/** interface §2.3 over the last `days` days of the domain's live mail. */
export async function domainInsights(
  deps: Pick<DomainDeps, 'store' | 'clock' | 'domains' | 'resolver'>,
  d: Domain,
  days: number,
) {
  const today = Math.floor(deps.clock.now() / DAY_MS);
  // the window's first whole UTC day on: what the daily series shows (the totals keep their rolling window)
  const since = deps.clock.now() - days * DAY_MS;
  const [counts, daily, listings, dmarc, byReason] = await Promise.all([
    insightCounts(deps.store.reader, d.projectId, d.name, since),
    insightDaily(deps.store.reader, d.projectId, d.name, (today - days + 1) * DAY_MS),
    listingsOf(deps.store.reader, d.name),
    dmarcSummaryOf(deps, d, days),
    bouncesByReason(deps.store.reader, d.projectId, d.name, since),
  ]);
  const blocklisted = listings.map((c) => ({ target: c.target, kind: c.kind, list: c.zone, since: iso(c.since) }));
  const setup = {
    ...insightSetup(d, deps.domains.trackingAvailable),
    dkim_key: { active_selector: d.activeSelector, next_rotation_at: iso(nextRotationAt(d, deps.domains.dkim)) },
    blocklisted,
  };
  return {
    ...computeInsights(d.name, days, counts, setup, { counts: daily, today }, dmarcTotals(dmarc)),
    bounces_by_reason: byReason,
  };
}
