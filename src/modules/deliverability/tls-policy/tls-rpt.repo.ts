import type { Db } from '../../../store/db.js';

// TLS-RPT session counts (RFC 8460), per policy domain, UTC day, policy type, result type and
// the session's hosts (migration 0032). The MTA counts in memory and adds its counts here every
// minute; the day's aggregate report is built from the rows of one day.

export interface TlsRptCount {
  policyDomain: string;
  /** days since the epoch (UTC) */
  day: number;
  policyType: 'sts' | 'tlsa';
  /** `success`, or an RFC 8460 §4.3 result type */
  resultType: string;
  mxHost: string;
  sendingIp: string;
  receivingIp: string;
  /** RFC 8460 §4.5 policy-string, the last one seen */
  policyString: string[];
  count: number;
}

const KEY = ['policy_domain', 'day', 'policy_type', 'result_type', 'mx_host', 'sending_ip', 'receiving_ip'];

interface Row {
  policy_domain: string;
  day: number | string;
  policy_type: string;
  result_type: string;
  mx_host: string;
  sending_ip: string;
  receiving_ip: string;
  policy_string: string;
  count: number | string;
}

export async function addTlsRptCounts(db: Db, counts: TlsRptCount[]): Promise<void> {
  for (const c of counts)
    await db('tls_rpt_counts')
      .insert({
        policy_domain: c.policyDomain,
        day: c.day,
        policy_type: c.policyType,
        result_type: c.resultType,
        mx_host: c.mxHost,
        sending_ip: c.sendingIp,
        receiving_ip: c.receivingIp,
        policy_string: JSON.stringify(c.policyString),
        count: c.count,
      })
      .onConflict(KEY)
      .merge({ policy_string: JSON.stringify(c.policyString), count: db.raw('tls_rpt_counts.count + ?', [c.count]) });
}

/** Every count of one UTC day, by policy domain. */
export async function tlsRptCountsOfDay(db: Db, day: number): Promise<TlsRptCount[]> {
  const rows = (await db('tls_rpt_counts')
    .select(...KEY, 'policy_string', 'count')
    .where({ day })
    .orderBy(KEY)) as Row[];
  return rows.map((r) => ({
    policyDomain: r.policy_domain,
    day: Number(r.day),
    policyType: r.policy_type === 'tlsa' ? 'tlsa' : 'sts',
    resultType: r.result_type,
    mxHost: r.mx_host,
    sendingIp: r.sending_ip,
    receivingIp: r.receiving_ip,
    policyString: JSON.parse(r.policy_string) as string[],
    count: Number(r.count),
  }));
}

/** The counts of the days before `day` (the tls_report job keeps 30 days). */
export async function deleteTlsRptCountsBefore(db: Db, day: number): Promise<number> {
  return db('tls_rpt_counts').where('day', '<', day).delete();
}
