import { simpleParser } from 'mailparser';
import { readAggregateReport, type AggregateReport } from './report-xml.js';
import { ReportError } from './report-file.js';

export interface MailedReports {
  reports: AggregateReport[];
  /** why each part that looked like a report was refused, for the log */
  refused: string[];
}

const MAX_PARTS = 2;
const LIKELY = /(^|\.)(zip|gz|gzip|xml)$/i;
const TYPES = /zip|gzip|xml|octet-stream/i;

/**
 * The aggregate reports a message carries (RFC 7489 §7.2.1.1: the report is
 * an attachment, zip, gzip or XML; some reporters put the XML in the body).
 * Each part is read with the size, ratio and XML limits of report-file.ts
 * and report-xml.ts; a part that is no report is told in `refused`.
 */
export async function reportsOfMessage(raw: Buffer): Promise<MailedReports> {
  const m = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
  const parts = m.attachments.filter((a) => LIKELY.test(a.filename ?? '') || TYPES.test(a.contentType ?? ''));
  const candidates = parts.map((a) => ({ bytes: a.content, name: a.filename ?? a.contentType }));
  if (!candidates.length && m.text && /<feedback[\s>]/.test(m.text))
    candidates.push({ bytes: Buffer.from(m.text.trim()), name: 'the message body' });
  const out: MailedReports = { reports: [], refused: [] };
  // a report is one attachment; a message with many is not a receiver's, and each costs a parse
  for (const c of candidates.slice(MAX_PARTS))
    out.refused.push(`${c.name}: more than ${MAX_PARTS} report parts in one message`);
  for (const c of candidates.slice(0, MAX_PARTS)) {
    try {
      out.reports.push(readAggregateReport(c.bytes, c.name));
    } catch (e) {
      if (!(e instanceof ReportError)) throw e;
      out.refused.push(`${c.name}: ${e.code}: ${e.message}`);
    }
  }
  if (!candidates.length) out.refused.push('no attachment looks like a report (zip, gzip or XML)');
  return out;
}
