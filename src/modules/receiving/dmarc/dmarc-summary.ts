import type { DkimResult } from './report-xml.js';

/** One stored row with what the summary needs of its report. */
export interface SummaryRow {
  orgName: string;
  reportId: string;
  begin: number;
  end: number;
  sourceIp: string;
  count: number;
  disposition: string;
  dkimEval: string;
  spfEval: string;
  headerFrom: string;
  dkim: DkimResult[];
}

/** How to tell this appliance's mail from others' in the rows. */
export interface OwnMail {
  domain: string;
  /** the appliance's outbound IPs (blocklists.ips or outbound.hostname's addresses) */
  ips: ReadonlySet<string>;
  /** the selectors the appliance signs with */
  selectors: readonly string[];
}

interface Tally {
  messages: number;
  dkimAligned: number;
  spfAligned: number;
  passed: number;
}

const emptyTally = (): Tally => ({ messages: 0, dkimAligned: 0, spfAligned: 0, passed: 0 });
const rate = (n: number, d: number) => (d > 0 ? n / d : null);

function add(t: Tally, r: SummaryRow): void {
  t.messages += r.count;
  if (r.dkimEval === 'pass') t.dkimAligned += r.count;
  if (r.spfEval === 'pass') t.spfAligned += r.count;
  // DMARC passes when either aligned check passed (RFC 7489 §4.2)
  if (r.dkimEval === 'pass' || r.spfEval === 'pass') t.passed += r.count;
}

const rates = (t: Tally) => ({
  dkim_aligned: rate(t.dkimAligned, t.messages),
  spf_aligned: rate(t.spfAligned, t.messages),
  dmarc_pass: rate(t.passed, t.messages),
});

/**
 * A row is this appliance's mail when it came from one of its IPs, or when
 * a receiver saw a passing DKIM signature of the domain with one of the
 * appliance's selectors (relay mode, or IPs not configured): nobody else
 * holds those keys.
 */
export function isOwn(r: SummaryRow, own: OwnMail): boolean {
  if (own.ips.has(r.sourceIp)) return true;
  return r.dkim.some(
    (d) =>
      d.result === 'pass' &&
      d.domain.toLowerCase() === own.domain &&
      own.selectors.includes((d.selector ?? '').toLowerCase()),
  );
}

/** GET /v1/domains/{id}/dmarc: totals, per reporter and per source IP, and the sources that are not this appliance. */
export function summarize(rows: readonly SummaryRow[], own: OwnMail, maxSources = 100) {
  const all = emptyTally();
  const reports = new Set<string>();
  const reporters = new Map<string, Tally & { reports: Set<string> }>();
  const sources = new Map<string, Tally & { own: boolean; headerFrom: Set<string> }>();
  const dispositions: Record<string, number> = { none: 0, quarantine: 0, reject: 0 };
  let first: number | null = null;
  let last: number | null = null;
  for (const r of rows) {
    add(all, r);
    const key = `${r.orgName}\n${r.reportId}`;
    reports.add(key);
    const rep = reporters.get(r.orgName) ?? { ...emptyTally(), reports: new Set<string>() };
    add(rep, r);
    rep.reports.add(key);
    reporters.set(r.orgName, rep);
    const src = sources.get(r.sourceIp) ?? { ...emptyTally(), own: false, headerFrom: new Set<string>() };
    add(src, r);
    src.own ||= isOwn(r, own);
    src.headerFrom.add(r.headerFrom);
    sources.set(r.sourceIp, src);
    dispositions[r.disposition] = (dispositions[r.disposition] ?? 0) + r.count;
    first = first === null ? r.begin : Math.min(first, r.begin);
    last = last === null ? r.end : Math.max(last, r.end);
  }
  const bySize = <T extends Tally>(a: [string, T], b: [string, T]) =>
    b[1].messages - a[1].messages || a[0].localeCompare(b[0]);
  const sourceList = [...sources].sort(bySize).map(([ip, s]) => ({
    source_ip: ip,
    messages: s.messages,
    rates: rates(s),
    this_appliance: s.own,
    header_from: [...s.headerFrom].sort(),
  }));
  const ownTally = emptyTally();
  for (const r of rows) if (sources.get(r.sourceIp)!.own) add(ownTally, r);
  return {
    reports: reports.size,
    messages: all.messages,
    first_report_begin: first,
    last_report_end: last,
    rates: rates(all),
    this_appliance: { messages: ownTally.messages, rates: rates(ownTally) },
    dispositions,
    reporters: [...reporters]
      .sort(bySize)
      .map(([org, t]) => ({ org_name: org, reports: t.reports.size, messages: t.messages, rates: rates(t) })),
    sources: sourceList.slice(0, maxSources),
    unknown_senders: sourceList.filter((s) => !s.this_appliance).slice(0, maxSources),
  };
}

export type DmarcSummary = ReturnType<typeof summarize>;

/** What insights show of the window's reports (interface §2.3 "what receiving servers reported"). */
export interface DmarcTotals {
  reports: number;
  messages: number;
  dmarc_pass_rate: number | null;
  dkim_aligned_rate: number | null;
  spf_aligned_rate: number | null;
  /** of this appliance's own mail (isOwn) */
  this_appliance_pass_rate: number | null;
  this_appliance_messages: number;
  unknown_sources: number;
  unknown_messages: number;
  /** days from the first report's start to the last one's end */
  days_covered: number;
}

export function dmarcTotals(s: DmarcSummary): DmarcTotals {
  return {
    reports: s.reports,
    messages: s.messages,
    dmarc_pass_rate: s.rates.dmarc_pass,
    dkim_aligned_rate: s.rates.dkim_aligned,
    spf_aligned_rate: s.rates.spf_aligned,
    this_appliance_pass_rate: s.this_appliance.rates.dmarc_pass,
    this_appliance_messages: s.this_appliance.messages,
    unknown_sources: s.unknown_senders.length,
    unknown_messages: s.unknown_senders.reduce((n, u) => n + u.messages, 0),
    days_covered:
      s.first_report_begin === null || s.last_report_end === null
        ? 0
        : Math.floor((s.last_report_end - s.first_report_begin) / 86_400_000),
  };
}
