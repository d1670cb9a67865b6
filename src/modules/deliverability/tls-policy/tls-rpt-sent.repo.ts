import type { Db } from '../../../store/db.js';

// Which TLS-RPT report (RFC 8460 §5: one policy domain, one UTC day) went to which rua address
// (migration 0033). A delivery is claimed here before the report leaves: the row's unique key lets
// one node, one run, send it, and nobody again once it was sent.

const TABLE = 'tls_rpt_sent';
const KEY = ['policy_domain', 'day', 'rua'];

export interface TlsReportKey {
  policyDomain: string;
  /** days since the epoch (UTC) */
  day: number;
  rua: string;
}

/** `sending`: claimed and under way (one whose node stopped meanwhile stays so: never sent twice) */
export type TlsReportOutcome = 'sending' | 'sent' | 'failed';

export interface TlsReportSent extends TlsReportKey {
  outcome: TlsReportOutcome;
  attempts: number;
  sentAt: number;
  detail: string | null;
}

interface Row {
  policy_domain: string;
  day: number | string;
  rua: string;
  outcome: string;
  attempts: number | string;
  sent_at: number | string;
  detail: string | null;
}

const whereKey = (k: TlsReportKey) => ({ policy_domain: k.policyDomain, day: k.day, rua: k.rua });

/**
 * Claims one delivery, in the caller's transaction: a new row, or a failed one tried fewer than
 * `maxAttempts` times. The claim is read back: another node's insert or update under the same key
 * (its transaction first) leaves this one's with no effect, and false.
 */
export async function claimTlsReport(
  db: Db,
  key: TlsReportKey,
  claim: string,
  now: number,
  maxAttempts: number,
): Promise<boolean> {
  const fresh = { outcome: 'sending', sent_at: now, detail: null, claim };
  await db(TABLE)
    .insert({ ...whereKey(key), ...fresh, attempts: 1 })
    .onConflict(KEY)
    .ignore();
  await db(TABLE)
    .where(whereKey(key))
    .andWhere('outcome', 'failed')
    .andWhere('attempts', '<', maxAttempts)
    .update({ ...fresh, attempts: db.raw('attempts + 1') });
  const row = (await db(TABLE).select('claim').where(whereKey(key)).first()) as { claim: string } | undefined;
  return row?.claim === claim;
}

/** How the claimed delivery ended; only while the claim is still this run's. */
export async function recordTlsReportOutcome(
  db: Db,
  key: TlsReportKey,
  claim: string,
  o: { outcome: 'sent' | 'failed'; detail: string; now: number },
): Promise<void> {
  await db(TABLE)
    .where({ ...whereKey(key), claim })
    .update({ outcome: o.outcome, detail: o.detail.slice(0, 1000), sent_at: o.now });
}

/** The deliveries of the days from `fromDay` on, by day, policy domain and rua. */
export async function tlsReportsSentSince(db: Db, fromDay: number): Promise<TlsReportSent[]> {
  const rows = (await db(TABLE)
    .select(...KEY, 'outcome', 'attempts', 'sent_at', 'detail')
    .where('day', '>=', fromDay)
    .orderBy(KEY)) as Row[];
  return rows.map((r) => ({
    policyDomain: r.policy_domain,
    day: Number(r.day),
    rua: r.rua,
    outcome: r.outcome as TlsReportOutcome,
    attempts: Number(r.attempts),
    sentAt: Number(r.sent_at),
    detail: r.detail,
  }));
}

/** The rows of the days before `day` (the tls_report job keeps 30 days). */
export async function deleteTlsReportsSentBefore(db: Db, day: number): Promise<number> {
  return db(TABLE).where('day', '<', day).delete();
}
