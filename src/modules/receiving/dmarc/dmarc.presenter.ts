import { iso } from '../../../lib/time.js';
import type { ImportedReport } from './dmarc.service.js';

/** What `posthorn dmarc import` prints: the report stored (or already there) and how much it holds. */
export function presentImportedReport(r: ImportedReport) {
  return {
    object: 'dmarc_report' as const,
    id: r.id,
    stored: r.id !== null,
    domain: r.domain,
    org_name: r.report.orgName,
    report_id: r.report.reportId,
    begin: iso(r.report.begin),
    end: iso(r.report.end),
    rows: r.report.rows.length,
    messages: r.report.rows.reduce((n, row) => n + row.count, 0),
  };
}
