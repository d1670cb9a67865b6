import { dmarcPolicy } from '../../../dns/checks.js';
import type { DmarcTotals } from '../../receiving/dmarc/dmarc-summary.js';
import type { Domain } from './domains.repo.js';
import {
  BOUNCE_RATE_AT_RISK,
  BOUNCE_RATE_WATCH,
  COMPLAINT_RATE_AT_RISK,
  COMPLAINT_RATE_WATCH,
} from './insights-thresholds.js';

export interface InsightCounts {
  messages: number;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  failed: number;
  suppressed: number;
  opened: number;
  clicked: number;
}

/** The counts of the two streams: transactional sends and broadcast emails. */
export interface StreamCounts {
  transactional: InsightCounts;
  broadcast: InsightCounts;
}

/** Both streams together: the totals interface §2.3 shows. */
export function totalOf(s: StreamCounts): InsightCounts {
  const out = { ...s.transactional };
  for (const k of Object.keys(out) as Array<keyof InsightCounts>) out[k] += s.broadcast[k];
  return out;
}

/** One day (UTC) of a domain's live recipients by outcome. */
export interface DailyCounts {
  /** days since 1970-01-01 */
  day: number;
  recipients: number;
  delivered: number;
  bounced: number;
  complained: number;
  failed: number;
}

export interface InsightSetup {
  dkim: 'verified' | 'pending' | 'failing';
  spf_return_path: 'aligned' | 'missing';
  dmarc: 'missing' | 'monitoring' | 'enforced';
  tracking: { opens: boolean; clicks: boolean };
  /** the signing key and its next rotation (dkim-rotation.ts) */
  dkim_key?: { active_selector: string; next_rotation_at: string | null };
  /** the DNS blocklists that list the domain or the appliance's IPs at their last check (blocklists module) */
  blocklisted?: Array<{ target: string; kind: 'ip' | 'domain'; list: string; since: string }>;
}

export type RecommendationLevel = 'info' | 'warning' | 'critical';

export interface Recommendation {
  level: RecommendationLevel;
  code: string;
  title: string;
  detail: string;
}

/**
 * interface §2.3 `setup`, read from the last DNS check. SPF aligns with the
 * From domain (DMARC, RFC 7489 §3.1.2) only when the return path has both its
 * MX (bounces come back) and an SPF record authorising the appliance; one of
 * them alone is not aligned. Tracking counts as on only when the platform can
 * serve it (`http.public_url` set): a domain's flags alone track nothing.
 */
export function insightSetup(
  d: Pick<Domain, 'status' | 'checks' | 'openTracking' | 'clickTracking'>,
  trackingAvailable: boolean,
): InsightSetup {
  const found = (key: string) => d.checks[key]?.dns === 'found';
  const policy = found('dmarc:txt') ? dmarcPolicy(d.checks['dmarc:txt'].seen[0]) : null;
  return {
    dkim: d.status === 'verified' ? 'verified' : d.status === 'pending' ? 'pending' : 'failing',
    spf_return_path: found('return_path:mx') && found('spf:txt') ? 'aligned' : 'missing',
    dmarc: policy === null ? 'missing' : policy === 'none' ? 'monitoring' : 'enforced',
    tracking: { opens: trackingAvailable && d.openTracking, clicks: trackingAvailable && d.clickTracking },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(2).replace(/\.?0+$/, '')}%`;
const ratio = (n: number, d: number) => (d > 0 ? n / d : 0);

/**
 * interface §2.3 from the window's counts and the last DNS check. Rates are
 * fractions of the recipients whose outcome is known: delivered and bounced
 * of those that reached a final answer, complaints of those delivered.
 */
export function computeInsights(
  domain: string,
  windowDays: number,
  counts: StreamCounts,
  setup: InsightSetup,
  daily: { counts: DailyCounts[]; today: number } = { counts: [], today: 0 },
  dmarc: DmarcTotals | null = null,
) {
  const totals = totalOf(counts);
  const rates = ratesOf(totals, setup);
  const recommendations = [...recommend(rates, setup), ...dmarcRecommendations(dmarc, setup, windowDays)];
  const status = recommendations.some((r) => r.level === 'critical')
    ? 'at_risk'
    : recommendations.some((r) => r.level === 'warning')
      ? 'watch'
      : 'healthy';
  const thresholds = {
    bounce_rate: { watch: BOUNCE_RATE_WATCH, at_risk: BOUNCE_RATE_AT_RISK },
    complaint_rate: { watch: COMPLAINT_RATE_WATCH, at_risk: COMPLAINT_RATE_AT_RISK },
  };
  // issue 27: the two streams apart, so that a newsletter's complaints are not read as the receipts'
  const streams = {
    transactional: { totals: counts.transactional, rates: ratesOf(counts.transactional, setup) },
    broadcast: { totals: counts.broadcast, rates: ratesOf(counts.broadcast, setup) },
  };
  return {
    object: 'domain_insights' as const,
    domain,
    window_days: windowDays,
    status,
    totals,
    rates,
    streams,
    setup,
    recommendations,
    thresholds,
    daily: dailySeries(daily.counts, daily.today, windowDays),
    dmarc_reports: dmarc,
  };
}

function ratesOf(totals: InsightCounts, setup: InsightSetup) {
  const reached = totals.delivered + totals.bounced + totals.failed;
  return {
    delivered: ratio(totals.delivered, reached),
    bounced: ratio(totals.bounced, reached),
    complained: ratio(totals.complained, totals.delivered),
    opened: setup.tracking.opens ? ratio(totals.opened, totals.delivered) : null,
    clicked: setup.tracking.clicks ? ratio(totals.clicked, totals.delivered) : null,
  };
}

/**
 * Each UTC day of the window, oldest first, days without mail as zeros, with
 * the same rates as the totals (what the dashboard's charts draw).
 */
export function dailySeries(counts: DailyCounts[], today: number, days: number) {
  const byDay = new Map(counts.map((c) => [c.day, c]));
  return Array.from({ length: days }, (_, i) => {
    const day = today - days + 1 + i;
    const c = byDay.get(day) ?? { recipients: 0, delivered: 0, bounced: 0, complained: 0, failed: 0 };
    const reached = c.delivered + c.bounced + c.failed;
    return {
      date: new Date(day * 86_400_000).toISOString().slice(0, 10),
      recipients: c.recipients,
      delivered: c.delivered,
      bounced: c.bounced,
      complained: c.complained,
      failed: c.failed,
      bounce_rate: ratio(c.bounced, reached),
      complaint_rate: ratio(c.complained, c.delivered),
    };
  });
}

/** Below this much of its own mail passing at receivers, the appliance's signing or return path is broken somewhere. */
const OWN_PASS_WATCH = 0.98;
/** DMARC reports must show this much of all mail passing, over 28 days at least, before p=quarantine is safe. */
const ENFORCE_PASS = 0.99;
const ENFORCE_DAYS = 28;

/** What the receivers' DMARC aggregate reports of the window say (docs/dmarc.md). */
function dmarcRecommendations(d: DmarcTotals | null, setup: InsightSetup, windowDays: number): Recommendation[] {
  if (!d || d.messages === 0) return [];
  const out: Recommendation[] = [];
  if (
    d.this_appliance_pass_rate !== null &&
    d.this_appliance_messages >= 10 &&
    d.this_appliance_pass_rate < OWN_PASS_WATCH
  ) {
    out.push({
      level: 'warning',
      code: 'dmarc_alignment_failing',
      title: "Receivers report this appliance's mail failing DMARC",
      detail: `Only ${pct(d.this_appliance_pass_rate)} of ${d.this_appliance_messages} messages from this appliance passed aligned DKIM or SPF. Check that the DKIM records still resolve and that the return path's MX and SPF are published.`,
    });
  }
  if (d.unknown_sources > 0) {
    out.push({
      level: setup.dmarc === 'enforced' ? 'info' : 'warning',
      code: 'unknown_senders',
      title: 'Others send mail as this domain',
      detail: `${d.unknown_messages} messages from ${d.unknown_sources} source(s) that are not this appliance used this domain in From. A service you use (a CRM, a help desk) needs its own DKIM and SPF; anything else is spoofing, which an enforced DMARC policy stops. GET /v1/domains/{id}/dmarc lists them.`,
    });
  }
  if (
    setup.dmarc === 'monitoring' &&
    windowDays >= 30 &&
    d.days_covered >= ENFORCE_DAYS &&
    (d.dmarc_pass_rate ?? 0) >= ENFORCE_PASS
  ) {
    out.push({
      level: 'info',
      code: 'ready_for_enforcement',
      title: 'Ready for an enforced DMARC policy',
      detail: `For ${d.days_covered} days receivers reported ${pct(d.dmarc_pass_rate!)} of the domain's mail passing DMARC. Move the policy to p=quarantine, then p=reject, so that nobody else can send as the domain.`,
    });
  }
  return out;
}

/** A DNS blocklist that lists the domain or the appliance's IPs (docs/blocklists.md). */
function listingWarnings(setup: InsightSetup): Recommendation[] {
  if (!setup.blocklisted?.length) return [];
  const where = setup.blocklisted.map((b) => `${b.target} on ${b.list}`).join(', ');
  return [
    {
      level: 'warning',
      code: 'blocklisted',
      title: 'A DNS blocklist lists this mail',
      detail: `Listed: ${where}. Receivers that use these lists refuse or junk the mail. Find the cause (a compromised sender, a list bought or old, a spam trap hit), fix it, then ask each list to remove the listing; GET /v1/blocklists shows each answer.`,
    },
  ];
}

function recommend(rates: { bounced: number; complained: number }, setup: InsightSetup): Recommendation[] {
  const out: Recommendation[] = [];
  if (rates.complained >= COMPLAINT_RATE_WATCH) {
    const atRisk = rates.complained >= COMPLAINT_RATE_AT_RISK;
    out.push({
      level: atRisk ? 'critical' : 'warning',
      code: 'complaint_rate_high',
      title: 'Too many recipients mark this mail as spam',
      detail: `The complaint rate is ${pct(rates.complained)}; Gmail and Yahoo require staying under ${pct(COMPLAINT_RATE_WATCH)} and never reaching ${pct(COMPLAINT_RATE_AT_RISK)}. Send only mail recipients asked for and make unsubscribing easy.`,
    });
  }
  if (rates.bounced >= BOUNCE_RATE_WATCH) {
    const atRisk = rates.bounced >= BOUNCE_RATE_AT_RISK;
    out.push({
      level: atRisk ? 'critical' : 'warning',
      code: 'bounce_rate_high',
      title: 'Too many messages bounce',
      detail: `The bounce rate is ${pct(rates.bounced)}; keep it under ${pct(BOUNCE_RATE_WATCH)} (${pct(BOUNCE_RATE_AT_RISK)} puts the domain at risk). Check addresses at signup and stop sending to addresses that bounced.`,
    });
  }
  out.push(...listingWarnings(setup));
  if (setup.dkim !== 'verified') {
    out.push({
      level: setup.dkim === 'failing' ? 'critical' : 'warning',
      code: setup.dkim === 'failing' ? 'dkim_failing' : 'dkim_pending',
      title: setup.dkim === 'failing' ? 'DKIM records are missing: live mail is stopped' : 'DKIM is not verified yet',
      detail: 'Publish the three required DKIM CNAME records, then verify the domain.',
    });
  }
  if (setup.spf_return_path === 'missing') {
    out.push({
      level: 'info',
      code: 'return_path_not_aligned',
      title: 'Bounces are not handled on your own domain',
      detail:
        'Publish the MX and SPF records of the return-path subdomain so that SPF aligns with your From domain for DMARC.',
    });
  }
  if (setup.dmarc === 'missing') {
    out.push({
      level: 'warning',
      code: 'dmarc_missing',
      title: 'No DMARC record',
      detail:
        'Gmail and Yahoo require a DMARC record from bulk senders; publish at least "v=DMARC1; p=none;" at _dmarc.',
    });
  } else if (setup.dmarc === 'monitoring') {
    out.push({
      level: 'info',
      code: 'dmarc_not_enforced',
      title: 'DMARC only monitors',
      detail:
        'Once your reports show only legitimate mail, move the policy to p=quarantine or p=reject so that others cannot send as your domain.',
    });
  }
  return out;
}
