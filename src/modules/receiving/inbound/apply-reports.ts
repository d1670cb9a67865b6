import type { Knex } from 'knex';
import type { Report, ReportRecipient } from '../bounces/report.js';
import { classifyBounce } from '../bounces/classify-bounce.js';
import type { Email } from '../../sending/emails/email.js';
import { applyReport, type ReportVerdict } from '../../sending/emails/lifecycle-reports.js';
import { lockEmails, storeChanges, type EmailChange } from '../../sending/emails/store-change.js';

export interface ReportTarget {
  emailId: string;
  /** the recipient the VERP address names (direct mode), else matched by address */
  recipientId: string | null;
  report: Report;
  now: number;
}

/**
 * A bounce or complaint about one of our emails, through the state machine
 * (lifecycle-reports.ts), written with its events and suppressions in the
 * caller's transaction. Returns how many recipients it changed. Test mail
 * never left the machine: a report about it is ignored.
 */
export async function applyReports(trx: Knex.Transaction, t: ReportTarget): Promise<number> {
  // a report changes recipients only: no queue row, and the email's own columns stay
  let email = (await lockEmails(trx, [t.emailId], { queueRows: false })).get(t.emailId);
  if (!email || email.environment !== 'live') return 0;
  const changes: EmailChange[] = [];
  for (const [recipientId, verdict] of verdicts(email, t)) {
    const change = applyReport(email, recipientId, verdict, t.now);
    if (!change) continue;
    email = change.email;
    changes.push({ ...change, emailMoved: false });
  }
  await storeChanges(trx, changes, t.now);
  return changes.length;
}

/** Which recipient of the email each part of the report is about, and what it says. */
function verdicts(email: Email, t: ReportTarget): Array<[string, ReportVerdict]> {
  const { report } = t;
  const byAddress = new Map(email.recipients.map((r) => [r.address.toLowerCase(), r.id]));
  if (report.kind === 'complaint') {
    const ids = t.recipientId
      ? [t.recipientId]
      : report.recipients.map((r) => byAddress.get(r.address)).filter((id): id is string => !!id);
    // an ARF report that hides the complainer (redacted Original-Rcpt-To) is about the only recipient, if there is one
    if (!ids.length && email.recipients.length === 1) ids.push(email.recipients[0].id);
    return ids.map((id) => [
      id,
      { kind: 'complained', feedbackType: report.feedbackType ?? 'abuse', userAgent: report.userAgent },
    ]);
  }
  if (t.recipientId) {
    const named = email.recipients.find((r) => r.id === t.recipientId);
    const about =
      report.recipients.find((r) => r.address === named?.address.toLowerCase()) ??
      report.recipients.find(isFailure) ??
      null;
    // a bounce sent to the VERP address of one recipient is about that recipient, whatever address its text names (forwarding, aliases)
    const v = about
      ? verdict(about, report)
      : {
          kind: 'bounced' as const,
          bounce: classifyBounce({ diagnostic: '', final: true }),
          reportingMta: report.reportingMta,
        };
    return v ? [[t.recipientId, v]] : [];
  }
  return report.recipients.flatMap((r): Array<[string, ReportVerdict]> => {
    const id = byAddress.get(r.address);
    const v = id ? verdict(r, report) : null;
    return id && v ? [[id, v]] : [];
  });
}

const isFailure = (r: ReportRecipient) => r.action === 'failed' || r.action === 'delayed';

function verdict(r: ReportRecipient, report: Report): ReportVerdict | null {
  if (!isFailure(r)) return null;
  // the report reader classified it already (modules/receiving/bounces): the same verdict `posthorn inbound parse` shows
  const bounce =
    r.bounceType && r.reason && r.status
      ? { bounceType: r.bounceType, reason: r.reason, status: r.status, diagnostic: r.diagnostic ?? '' }
      : classifyBounce({ status: r.status, diagnostic: r.diagnostic, final: r.action === 'failed' });
  return r.action === 'delayed'
    ? { kind: 'delayed', bounce, reportingMta: report.reportingMta }
    : { kind: 'bounced', bounce, reportingMta: report.reportingMta };
}
