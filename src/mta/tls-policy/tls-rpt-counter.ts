import type { Clock } from '../../lib/time.js';
import type { Logger } from '../../log/logger.js';
import type { Db } from '../../store/db.js';
import {
  addTlsRptCounts,
  tlsRptCountsOfDay,
  type TlsRptCount,
} from '../../modules/deliverability/tls-policy/tls-rpt.repo.js';
import { buildTlsReport, type TlsReport, type TlsResultType, type TlsSessionTally } from './tls-report.js';
import type { SessionHosts, TlsPolicyRef, TlsSessionRecorder } from './tls-session.js';

// TLS-RPT (RFC 8460) counting: every SMTP session under an MTA-STS or DANE policy, by policy
// domain, UTC day and result, counted in memory and added to the store every minute (and at
// stop); the day's aggregate report per policy domain is built from the stored counts.

const DAY_MS = 86_400_000;

export interface TlsRptCounterOptions {
  clock: Clock;
  /** writes, in the caller's transaction of the single writer */
  write: (fn: (trx: Db) => Promise<void>) => Promise<unknown>;
  logger?: Logger;
  flushMs?: number;
}

export class TlsRptCounter implements TlsSessionRecorder {
  private counts = new Map<string, TlsRptCount>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly o: TlsRptCounterOptions) {}

  record(policy: TlsPolicyRef, session: SessionHosts, result: TlsResultType | 'success'): void {
    this.add({
      policyDomain: policy.domain,
      day: Math.floor(this.o.clock.now() / DAY_MS),
      policyType: policy.type,
      resultType: result,
      mxHost: session.mxHost,
      sendingIp: session.sendingIp,
      receivingIp: session.receivingIp,
      policyString: policy.strings,
      count: 1,
    });
  }

  private add(c: TlsRptCount): void {
    const key = JSON.stringify([
      c.policyDomain,
      c.day,
      c.policyType,
      c.resultType,
      c.mxHost,
      c.sendingIp,
      c.receivingIp,
    ]);
    const held = this.counts.get(key);
    if (!held) return void this.counts.set(key, { ...c });
    held.count += c.count;
    held.policyString = c.policyString;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.o.flushMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  /** Adds what was counted since the last flush to the store; on failure the counts are kept for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.counts.size) return;
      const taken = [...this.counts.values()];
      this.counts = new Map();
      try {
        await this.o.write((trx) => addTlsRptCounts(trx, taken));
      } catch (e) {
        this.o.logger?.warn({ err: e }, 'TLS-RPT counts could not be stored');
        for (const c of taken) this.add(c);
      }
    });
    return this.flushing;
  }
}

/**
 * The aggregate reports (RFC 8460 §4.4) of one UTC day (days since the epoch), one per policy
 * domain, each with one entry per policy type met that day. Sending them (§5) is not done here.
 */
export async function tlsReportsOfDay(
  reader: Db,
  day: number,
  /** submitter: outbound.hostname, the TLS-Report-Submitter of report mail (§5.3), and the report-id's domain */
  o: { organizationName: string; contactInfo: string; submitter: string },
): Promise<Array<{ policyDomain: string; report: TlsReport }>> {
  const byDomain = new Map<string, Map<string, TlsSessionTally>>();
  for (const c of await tlsRptCountsOfDay(reader, day)) {
    const tallies = byDomain.get(c.policyDomain) ?? new Map<string, TlsSessionTally>();
    byDomain.set(c.policyDomain, tallies);
    const t = tallies.get(c.policyType) ?? tallyOf(c);
    tallies.set(c.policyType, t);
    // a failed policy fetch is counted without the policy: the policy comes from another row
    if (!t.policyString.length && c.policyString.length)
      Object.assign(t, tallyOf(c), { success: t.success, failures: t.failures });
    if (c.resultType === 'success') t.success += c.count;
    else
      t.failures.push({
        resultType: c.resultType as TlsResultType,
        sendingMtaIp: c.sendingIp,
        receivingMxHostname: c.mxHost,
        ...(c.receivingIp ? { receivingIp: c.receivingIp } : {}),
        count: c.count,
      });
  }
  const start = new Date(day * DAY_MS);
  const end = new Date((day + 1) * DAY_MS);
  const submitter = o.submitter;
  return [...byDomain].map(([policyDomain, tallies]) => ({
    policyDomain,
    report: buildTlsReport({
      organizationName: o.organizationName,
      contactInfo: o.contactInfo,
      // §4.4 report-id: unique per report; the day and the policy domain make it so for one submitter
      reportId: `${start.toISOString().slice(0, 10)}.${policyDomain}@${submitter}`,
      start,
      end,
      policies: [...tallies.values()],
    }),
  }));
}

/** §4.4 mx-host: for MTA-STS the policy's mx patterns, taken from its policy-string. */
function tallyOf(c: TlsRptCount): TlsSessionTally {
  return {
    policyDomain: c.policyDomain,
    policyType: c.policyType,
    policyString: c.policyString,
    mxHosts: c.policyType === 'sts' ? c.policyString.filter((l) => l.startsWith('mx: ')).map((l) => l.slice(4)) : [],
    success: 0,
    failures: [],
  };
}
