import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import { findProject, type Project } from '../../modules/account/projects/projects.repo.js';
import { findDomainByName } from '../../modules/deliverability/domains/domains.repo.js';
import type { Acceptor } from '../../modules/sending/emails/accept-batch.js';
import type { StoredAttachment } from '../../modules/sending/emails/email.js';
import type { SendEmailBody } from '../../modules/sending/emails/emails.schema.js';
import { prepareEmail } from '../../modules/sending/emails/prepare.js';
import { TLSRPT_GZIP_TYPE, tlsReportMailHeaders, type TlsReport } from './tls-report.js';

// TLS reports to `mailto:` rua addresses (RFC 8460 §5.3) go out as live emails of the project
// whose verified sending domain outbound.tls_rpt.from is on: through the accept like POST
// /v1/emails, so that the MTA delivers them, DKIM-signed with that domain's key, and they show in
// that project's email list. Their email says it is a TLS report (Email.reportType, which no send
// body can set; not the tag, which any can): the MTA builds it as a multipart/report and delivers it
// despite the recipient domain's MTA-STS or DANE policy, without counting its sessions (§5.3).

/** One policy domain's report of one day, gzipped (§5.2), as it is sent to each rua. */
export interface ReportLetter {
  policyDomain: string;
  /** outbound.hostname: TLS-Report-Submitter and the file name's sender (§5.1, §5.3) */
  submitter: string;
  report: TlsReport;
  gzipped: Buffer;
}

export interface DeliveryOutcome {
  ok: boolean;
  /** the email's id, the HTTP status, or why it failed */
  detail: string;
}

/** The send body of a report mail: §5.3's subject and header fields, a short text, the report attached per §5.1. */
export function tlsReportMailBody(from: string, to: string, letter: ReportLetter): SendEmailBody {
  const { report } = letter;
  const start = new Date(report['date-range']['start-datetime']);
  const end = new Date(report['date-range']['end-datetime']);
  const mail = tlsReportMailHeaders({
    policyDomain: letter.policyDomain,
    submitter: letter.submitter,
    reportId: report['report-id'],
    start,
    end,
  });
  const sum = (k: 'total-successful-session-count' | 'total-failure-session-count') =>
    report.policies.reduce((n, p) => n + p.summary[k], 0);
  const text = [
    `This is an aggregate SMTP TLS report (RFC 8460) from ${mail.headers['TLS-Report-Submitter']}`,
    `about mail to ${mail.headers['TLS-Report-Domain']} on ${start.toISOString().slice(0, 10)} (UTC):`,
    `${sum('total-successful-session-count')} successful and ${sum('total-failure-session-count')} failed TLS session(s).`,
    '',
    `The report is attached as ${mail.attachment.filename} (${mail.attachment.contentType}).`,
  ].join('\n');
  return {
    from,
    to: [to],
    subject: mail.subject,
    text,
    headers: { ...mail.headers },
    attachments: [
      {
        filename: mail.attachment.filename,
        content: letter.gzipped.toString('base64'),
        content_type: mail.attachment.contentType,
      },
    ],
    // tagged so that the project can tell these mails from its own in GET /v1/emails
    tags: { posthorn: 'tls_report', policy_domain: mail.headers['TLS-Report-Domain'] },
  };
}

export interface TlsReportMailer {
  send(to: string, letter: ReportLetter): Promise<DeliveryOutcome>;
}

export interface TlsReportMailDeps {
  store: Store;
  clock: Clock;
  /** the accept of this thread; null: it has none, and mail reports are not sent */
  accept: Acceptor | null;
}

/**
 * The mailer for outbound.tls_rpt.from, or why mail reports cannot be sent now: no From, its domain
 * not a verified sending domain, or its project not allowed live mail.
 */
export async function tlsReportMailer(
  deps: TlsReportMailDeps,
  from: string | null,
): Promise<TlsReportMailer | { skipped: string }> {
  if (from === null) return { skipped: 'outbound.tls_rpt.from is not set' };
  const accept = deps.accept;
  if (!accept) return { skipped: 'this thread accepts no mail' };
  const name = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
  const domain = await findDomainByName(deps.store.reader, name);
  if (!domain || domain.status !== 'verified')
    return { skipped: `${name} (outbound.tls_rpt.from) is not a verified sending domain` };
  const project = await findProject(deps.store.reader, domain.projectId);
  if (!project || project.suspended || !project.approved)
    return { skipped: `the project of ${name} (outbound.tls_rpt.from) may not send live mail` };
  return { send: (to, letter) => submit(deps, accept, project, from, to, letter) };
}

/** Accepted is delivered as far as this job goes: the MTA retries the email on its own schedule. */
async function submit(
  deps: TlsReportMailDeps,
  accept: Acceptor,
  project: Project,
  from: string,
  to: string,
  letter: ReportLetter,
): Promise<DeliveryOutcome> {
  try {
    const prepared = prepareEmail(tlsReportMailBody(from, to, letter), deps.clock.now());
    const attachments: StoredAttachment[] = prepared.attachments.map((a) => ({
      filename: a.filename!,
      contentType: a.contentType ?? TLSRPT_GZIP_TYPE,
      contentId: null,
      content: a.content!,
    }));
    const accepted = await accept.submit({
      project,
      environment: 'live',
      prepared,
      attachments,
      requestId: newId('request'),
      idempotency: null,
      // built as a multipart/report and delivered despite the recipient domain's TLS policy (§5.3)
      reportType: 'tlsrpt',
    });
    return { ok: true, detail: accepted.email?.id ?? 'accepted' };
  } catch (e) {
    // refused by the accept (a suppressed address, a limit reached): this rua fails, the others go on
    if (e instanceof ApiError) return { ok: false, detail: `${e.code}: ${e.message}` };
    throw e;
  }
}
