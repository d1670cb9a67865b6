import type { Knex } from 'knex';
import { validationError, notFound } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { domainOfReport, storeReport } from './dmarc.repo.js';
import { ReportError } from './report-file.js';
import type { MailedReports } from './report-mail.js';
import { readAggregateReport, type AggregateReport } from './report-xml.js';

/** A report is about a domain when its policy domain is that domain or one of its subdomains. */
export const reportFits = (report: AggregateReport, domain: string) =>
  report.domain === domain || report.domain.endsWith(`.${domain}`);

export interface DmarcTarget {
  domainId: string;
  projectId: string;
  domain: string;
}

/**
 * The reports of one message to dmarc+<token>@ addresses, in the inbound
 * transaction: each stored for the domain its address names, once. A report
 * about another domain is not stored (anyone can mail the address; the token
 * only says which domain the receiver meant).
 */
export async function storeMailedReports(
  trx: Knex.Transaction,
  targets: DmarcTarget[],
  mailed: MailedReports,
  now: number,
) {
  const out = { stored: 0, duplicate: 0, refused: [...mailed.refused] };
  for (const report of mailed.reports) {
    const target = targets.find((t) => reportFits(report, t.domain));
    if (!target) {
      out.refused.push(
        `a report about ${report.domain} came to the report address of ${targets.map((t) => t.domain).join(', ')}`,
      );
      continue;
    }
    if (await storeReport(trx, target, report, now)) out.stored++;
    else out.duplicate++;
  }
  return out;
}

/** A report `posthorn dmarc import` read: its id (null: the same report was stored before) and the domain it was stored for. */
export interface ImportedReport {
  id: string | null;
  /** the registered domain's name */
  domain: string;
  report: AggregateReport;
}

/**
 * `posthorn dmarc import FILE`: a report that arrived elsewhere (another
 * rua address, a mailbox export), stored for the registered domain it is
 * about, once.
 */
export async function importReport(
  deps: { store: Store; clock: Clock },
  bytes: Buffer,
  filename: string,
): Promise<ImportedReport> {
  let report: AggregateReport;
  try {
    report = readAggregateReport(bytes, filename);
  } catch (e) {
    if (e instanceof ReportError)
      throw validationError('file', `${filename} is not a readable DMARC aggregate report (${e.code}): ${e.message}`);
    throw e;
  }
  const domain = await domainOfReport(deps.store.knex, report.domain);
  if (!domain) throw notFound(`domain ${report.domain} (the report's policy domain)`);
  const id = await deps.store.tx((trx) =>
    storeReport(trx, { domainId: domain.id, projectId: domain.projectId }, report, deps.clock.now()),
  );
  return { id, domain: domain.name, report };
}
