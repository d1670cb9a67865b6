import { newId } from '../../../lib/ids.js';
import type { Db } from '../../../store/db.js';
import { insertRows } from '../../../store/insert-rows.js';
import type { SummaryRow } from './dmarc-summary.js';
import type { AggregateReport } from './report-xml.js';

export interface ReportOwner {
  domainId: string;
  projectId: string;
}

/**
 * A report and its rows, once: a receiver that mails the same report twice
 * (a retry, two rua addresses) or an import of one already received stores
 * nothing the second time. Returns the stored report's id, or null for a
 * duplicate.
 */
export async function storeReport(db: Db, owner: ReportOwner, r: AggregateReport, now: number): Promise<string | null> {
  const seen = (await db('dmarc_reports')
    .select('id')
    .where({ domain_id: owner.domainId, org_name: r.orgName, report_id: r.reportId })
    .first()) as { id: string } | undefined;
  if (seen) return null;
  const id = newId('dmarcReport', now);
  const messages = r.rows.reduce((n, row) => n + row.count, 0);
  // Another process may store the same report meanwhile (PostgreSQL): the unique index decides, and
  // the loser's insert does nothing rather than failing, which would abort the whole transaction.
  await db('dmarc_reports')
    .insert({
      id,
      domain_id: owner.domainId,
      project_id: owner.projectId,
      org_name: r.orgName,
      email: r.email,
      report_id: r.reportId,
      begin_at: r.begin,
      end_at: r.end,
      policy: JSON.stringify(r.policy),
      rows: r.rows.length,
      messages,
      received_at: now,
    })
    .onConflict(['domain_id', 'org_name', 'report_id'])
    .ignore();
  const stored = (await db('dmarc_reports')
    .select('id')
    .where({ domain_id: owner.domainId, org_name: r.orgName, report_id: r.reportId })
    .first()) as { id: string } | undefined;
  if (stored?.id !== id) return null;
  await insertRows(
    db,
    'dmarc_rows',
    r.rows.map((row, seq) => ({
      report_id: id,
      seq,
      source_ip: row.sourceIp,
      count: row.count,
      disposition: row.disposition,
      dkim_eval: row.dkimEval,
      spf_eval: row.spfEval,
      header_from: row.headerFrom,
      envelope_from: row.envelopeFrom ?? null,
      dkim: JSON.stringify(row.dkim),
      spf: JSON.stringify(row.spf),
    })),
  );
  return id;
}

/** Every row of the domain's reports whose period ended after `since`. */
export async function rowsSince(db: Db, domainId: string, since: number): Promise<SummaryRow[]> {
  const rows = (await db('dmarc_rows as w')
    .join('dmarc_reports as r', 'r.id', 'w.report_id')
    .select(
      'r.org_name',
      'r.report_id',
      'r.begin_at',
      'r.end_at',
      'w.source_ip',
      'w.count',
      'w.disposition',
      'w.dkim_eval',
      'w.spf_eval',
      'w.header_from',
      'w.dkim',
    )
    .where('r.domain_id', domainId)
    .andWhere('r.end_at', '>', since)
    .orderBy([{ column: 'r.end_at' }, { column: 'w.report_id' }, { column: 'w.seq' }])) as Array<
    Record<string, string | number>
  >;
  return rows.map((x) => ({
    orgName: String(x.org_name),
    reportId: String(x.report_id),
    begin: Number(x.begin_at),
    end: Number(x.end_at),
    sourceIp: String(x.source_ip),
    count: Number(x.count),
    disposition: String(x.disposition),
    dkimEval: String(x.dkim_eval),
    spfEval: String(x.spf_eval),
    headerFrom: String(x.header_from),
    dkim: JSON.parse(String(x.dkim)) as SummaryRow['dkim'],
  }));
}

/** The registered domain a report is about: its policy domain, or the nearest parent registered here. */
export async function domainOfReport(
  db: Db,
  reportDomain: string,
): Promise<{ id: string; projectId: string; name: string } | null> {
  const labels = reportDomain.toLowerCase().split('.');
  const names = labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
  if (!names.length) return null;
  const rows = (await db('domains').select('id', 'project_id', 'name').whereIn('name', names)) as Array<{
    id: string;
    project_id: string;
    name: string;
  }>;
  const best = rows.sort((a, b) => b.name.length - a.name.length)[0];
  return best ? { id: best.id, projectId: best.project_id, name: best.name } : null;
}
