import type { ImportReport } from './contact-import.service.js';

/** What `posthorn contacts import` prints. */
export function presentImportReport(r: ImportReport) {
  return {
    object: 'contacts_import' as const,
    rows: r.rows,
    created: r.created,
    updated: r.updated,
    audience_id: r.audienceId,
    added_to_audience: r.addedToAudience,
    refused: r.refused.map(({ line, reason }) => ({ line, reason })),
  };
}
