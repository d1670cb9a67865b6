import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Config } from '../../config/config.js';
import { isNoRecord, type DnsResolver } from '../../dns/resolver.js';
import type { Logger } from '../../log/logger.js';
import {
  claimTlsReport,
  deleteTlsReportsSentBefore,
  recordTlsReportOutcome,
  tlsReportsSentSince,
  type TlsReportKey,
  type TlsReportSent,
} from '../../modules/deliverability/tls-policy/tls-rpt-sent.repo.js';
import { deleteTlsRptCountsBefore } from '../../modules/deliverability/tls-policy/tls-rpt.repo.js';
import { parseTlsRptTxt, ruaMailbox, tlsReportHttpsHeaders, type TlsReport } from './tls-report.js';
import {
  tlsReportMailer,
  type DeliveryOutcome,
  type ReportLetter,
  type TlsReportMailDeps,
  type TlsReportMailer,
} from './tls-report-mail.js';
import { tlsReportsOfDay } from './tls-rpt-counter.js';

// The tls_report job (RFC 8460 §3, §5): each policy domain's aggregate report of the previous UTC
// day, gzipped, to every rua of its `_smtp._tls` record: POSTed to https: ones (§5.4), mailed to
// mailto: ones (§5.3). Each (domain, day, rua) is claimed in the store before it leaves, so that
// nodes and reruns never send it twice; a failed delivery is tried once more by the next run.

const DAY_MS = 86_400_000;
/** the counts and the sent rows are kept this many days */
export const TLS_RPT_KEEP_DAYS = 30;
/** the first try, and one more at the next run */
const MAX_ATTEMPTS = 2;
/** the column's width: a longer URI is not used */
const MAX_RUA_LENGTH = 1000;

/** POSTs a report to an https: rua (through the egress guard); the answer's status. Rejects when no answer came. */
export type TlsReportPost = (url: string, body: Buffer, headers: Record<string, string>) => Promise<number>;

export interface TlsReportSettings {
  enabled: boolean;
  from: string | null;
  organizationName: string;
  contactInfo: string;
  /** outbound.hostname */
  submitter: string;
}

export interface TlsReportDeps extends TlsReportMailDeps {
  logger: Logger;
  resolver: Pick<DnsResolver, 'resolveTxt'>;
  post: TlsReportPost;
  settings: TlsReportSettings;
}

/** What one run did, for the job's sentence. */
export interface TlsReportRun {
  enabled: boolean;
  sent: { https: number; mail: number };
  failed: number;
  /** reports of a domain without a usable `_smtp._tls` record */
  noRecord: number;
  lookupFailed: number;
  /** deliveries another node or run claimed first */
  claimedElsewhere: number;
  /** deliveries to mailto: addresses not made, and why */
  mailSkipped: number;
  mailSkippedWhy: string | null;
  pruned: number;
}

export function tlsReportSettings(config: Config): TlsReportSettings {
  const { hostname, tlsRpt } = config.outbound;
  return { ...tlsRpt, submitter: hostname };
}

/** One run of the job: yesterday's reports, what the day before left unsent, then the prune. */
export async function sendTlsReports(deps: TlsReportDeps): Promise<TlsReportRun> {
  const today = Math.floor(deps.clock.now() / DAY_MS);
  const run: TlsReportRun = {
    enabled: deps.settings.enabled,
    sent: { https: 0, mail: 0 },
    failed: 0,
    noRecord: 0,
    lookupFailed: 0,
    claimedElsewhere: 0,
    mailSkipped: 0,
    mailSkippedWhy: null,
    pruned: 0,
  };
  if (deps.settings.enabled) {
    const mailer = await tlsReportMailer(deps, deps.settings.from);
    if ('skipped' in mailer) run.mailSkippedWhy = mailer.skipped;
    const sent = await tlsReportsSentSince(deps.store.reader, today - 2);
    const ctx: RunContext = { deps, run, mailer, sent, ruas: new Map() };
    // §4.1: a report covers one UTC day. The day before yesterday's is looked at again for what a
    // failed delivery or a missed run (the appliance down at the hour) left unsent.
    for (const day of [today - 2, today - 1]) await sendDay(ctx, day);
    if (run.mailSkipped > 0)
      deps.logger.warn({ skipped: run.mailSkipped, reason: run.mailSkippedWhy }, 'TLS reports to mailto: not sent');
  }
  run.pruned = await deps.store.tx(
    async (trx) =>
      (await deleteTlsRptCountsBefore(trx, today - TLS_RPT_KEEP_DAYS)) +
      (await deleteTlsReportsSentBefore(trx, today - TLS_RPT_KEEP_DAYS)),
  );
  return run;
}

interface RunContext {
  deps: TlsReportDeps;
  run: TlsReportRun;
  mailer: TlsReportMailer | { skipped: string };
  /** the rows of the days this run looks at */
  sent: TlsReportSent[];
  /** each domain's rua list, looked up once per run: null when the lookup failed */
  ruas: Map<string, Promise<string[] | null>>;
}

const isDone = (row: TlsReportSent | undefined) =>
  row !== undefined && (row.outcome !== 'failed' || row.attempts >= MAX_ATTEMPTS);

/** A domain's addresses are looked up again for the day before too (once a run): one may be new, or usable now. */
async function sendDay(ctx: RunContext, day: number): Promise<void> {
  const { deps } = ctx;
  for (const { policyDomain, report } of await tlsReportsOfDay(deps.store.reader, day, deps.settings)) {
    const rows = ctx.sent.filter((r) => r.day === day && r.policyDomain === policyDomain);
    const found = await ruasOf(ctx, policyDomain);
    const due = (found ?? []).filter((rua) => !isDone(rows.find((r) => r.rua === rua)));
    if (!due.length) continue;
    const letter = letterOf(deps.settings.submitter, policyDomain, report);
    for (const rua of due) await deliver(ctx, { policyDomain, day, rua }, letter);
  }
}

function letterOf(submitter: string, policyDomain: string, report: TlsReport): ReportLetter {
  // §5.2: the report is gzipped for mail and HTTPS alike
  return { policyDomain, submitter, report, gzipped: gzipSync(JSON.stringify(report)) };
}

/** §3: the rua URIs of `_smtp._tls.<domain>`, [] without a usable record, null when DNS did not answer. */
function ruasOf(ctx: RunContext, domain: string): Promise<string[] | null> {
  let found = ctx.ruas.get(domain);
  if (!found) {
    found = lookUp(ctx.deps, domain).then((r) => {
      if (r === null) ctx.run.lookupFailed++;
      else if (r.length === 0) ctx.run.noRecord++;
      return r;
    });
    ctx.ruas.set(domain, found);
  }
  return found;
}

async function lookUp(deps: TlsReportDeps, domain: string): Promise<string[] | null> {
  try {
    const policy = parseTlsRptTxt(await deps.resolver.resolveTxt(`_smtp._tls.${domain}`));
    return [...new Set(policy?.rua ?? [])].filter((rua) => rua.length <= MAX_RUA_LENGTH);
  } catch (e) {
    if (isNoRecord(e)) return [];
    deps.logger.warn(
      { err: e, policy_domain: domain },
      'TLS-RPT record lookup failed; the report waits for the next run',
    );
    return null;
  }
}

/** Claimed, sent, recorded: a delivery whose claim another run won is left to it. */
async function deliver(ctx: RunContext, key: TlsReportKey, letter: ReportLetter): Promise<void> {
  const { deps, run } = ctx;
  const mailbox = ruaMailbox(key.rua);
  if (mailbox !== null && 'skipped' in ctx.mailer) {
    run.mailSkipped++;
    return;
  }
  const claim = randomUUID().replace(/-/g, '');
  if (!(await deps.store.tx((trx) => claimTlsReport(trx, key, claim, deps.clock.now(), MAX_ATTEMPTS)))) {
    run.claimedElsewhere++;
    return;
  }
  let outcome: DeliveryOutcome;
  try {
    outcome =
      mailbox !== null && 'send' in ctx.mailer
        ? await ctx.mailer.send(mailbox, letter)
        : await post(deps, key.rua, letter);
  } catch (e) {
    outcome = { ok: false, detail: (e as Error).message };
  }
  const result = outcome.ok ? 'sent' : 'failed';
  await deps.store.tx((trx) =>
    recordTlsReportOutcome(trx, key, claim, { outcome: result, detail: outcome.detail, now: deps.clock.now() }),
  );
  if (!outcome.ok) {
    run.failed++;
    deps.logger.warn(
      { policy_domain: key.policyDomain, day: new Date(key.day * DAY_MS).toISOString().slice(0, 10), rua: key.rua },
      `TLS report not delivered: ${outcome.detail}`,
    );
  } else if (mailbox !== null) run.sent.mail++;
  else run.sent.https++;
}

/** §5.4: a 2xx answer is a delivery; anything else, or none, is not. */
async function post(deps: TlsReportDeps, url: string, letter: ReportLetter): Promise<DeliveryOutcome> {
  const status = await deps.post(url, letter.gzipped, tlsReportHttpsHeaders());
  return { ok: status >= 200 && status <= 299, detail: `status ${status}` };
}

/** The job's sentence. */
export function describeTlsReportRun(r: TlsReportRun): string {
  const pruned = `${r.pruned} old TLS-RPT row(s) deleted`;
  if (!r.enabled) return `TLS reports off (outbound.tls_rpt.enabled); ${pruned}`;
  const parts = [
    `${r.sent.https + r.sent.mail} TLS report(s) sent (${r.sent.https} by HTTPS, ${r.sent.mail} by mail), ${r.failed} failed`,
  ];
  if (r.noRecord) parts.push(`${r.noRecord} policy domain(s) without a _smtp._tls record`);
  if (r.lookupFailed) parts.push(`${r.lookupFailed} _smtp._tls lookup(s) failed`);
  if (r.claimedElsewhere) parts.push(`${r.claimedElsewhere} taken by another node`);
  if (r.mailSkipped) parts.push(`${r.mailSkipped} to mailto: skipped: ${r.mailSkippedWhy}`);
  parts.push(pruned);
  return parts.join('; ');
}
