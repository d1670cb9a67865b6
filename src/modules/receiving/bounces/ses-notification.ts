import { classifyBounce } from './classify-bounce.js';
import type { ReportRecipient } from './dsn.js';

/**
 * Amazon SES event notifications that arrive as mail (an SNS topic's e-mail
 * subscription, or SES feedback forwarding set to JSON): the body is the
 * notification's JSON, as such or as the "Message" string of the SNS
 * envelope. Bounces carry SES's bouncedRecipients with their status and
 * diagnosticCode; complaints their complainedRecipients. Pure.
 */
export interface SesNotification {
  kind: 'bounce' | 'complaint' | 'other';
  originalMessageId: string | null;
  recipients: ReportRecipient[];
  reportingMta: string | null;
  feedbackType: string | null;
}

type Json = Record<string, unknown>;

/** A JSON field's text: a string as it is; any other value has none. */
const textOf = (v: unknown): string => (typeof v === 'string' ? v : '');

export function readSesNotification(text: string): SesNotification | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  const outer = parseJson(trimmed);
  const inner = outer && typeof outer.Message === 'string' ? parseJson(outer.Message) : outer;
  const type = inner && textOf(inner.notificationType ?? inner.eventType);
  if (!inner || !type) return null;
  const mail = (inner.mail ?? {}) as Json;
  const headers = Array.isArray(mail.headers) ? (mail.headers as Json[]) : [];
  const id = headers.find((h) => String(h.name).toLowerCase() === 'message-id')?.value;
  const base = {
    originalMessageId: typeof id === 'string' && /^<[^<>\s]+>$/.test(id.trim()) ? id.trim() : null,
    reportingMta: null,
    feedbackType: null,
  };
  if (type === 'Bounce') return { ...base, kind: 'bounce', ...bounced((inner.bounce ?? {}) as Json) };
  if (type === 'Complaint') return { ...base, kind: 'complaint', ...complained((inner.complaint ?? {}) as Json) };
  return { ...base, kind: 'other', recipients: [] };
}

function bounced(bounce: Json): Pick<SesNotification, 'recipients' | 'reportingMta'> {
  const list = Array.isArray(bounce.bouncedRecipients) ? (bounce.bouncedRecipients as Json[]) : [];
  const recipients = list
    .filter((r) => typeof r.emailAddress === 'string')
    .map((r): ReportRecipient => {
      const status = typeof r.status === 'string' ? r.status : null;
      const diagnostic = typeof r.diagnosticCode === 'string' ? r.diagnosticCode.replace(/^\s*smtp\s*;\s*/i, '') : null;
      const delayed = textOf(r.action).toLowerCase() === 'delayed';
      const b = classifyBounce({ status, diagnostic, final: !delayed, delayed });
      return {
        address: String(r.emailAddress).toLowerCase(),
        action: delayed ? 'delayed' : 'failed',
        status: b.status,
        bounceType: b.bounceType,
        reason: b.reason,
        diagnostic: b.diagnostic || null,
      };
    });
  const mta = typeof bounce.reportingMTA === 'string' ? bounce.reportingMTA.replace(/^\s*[A-Za-z]+\s*;\s*/, '') : null;
  return { recipients, reportingMta: mta };
}

function complained(complaint: Json): Pick<SesNotification, 'recipients' | 'feedbackType'> {
  const list = Array.isArray(complaint.complainedRecipients) ? (complaint.complainedRecipients as Json[]) : [];
  const recipients = list
    .filter((r) => typeof r.emailAddress === 'string')
    .map((r): ReportRecipient => ({
      address: String(r.emailAddress).toLowerCase(),
      action: 'failed',
      status: null,
      bounceType: null,
      reason: null,
      diagnostic: null,
    }));
  return {
    recipients,
    feedbackType:
      typeof complaint.complaintFeedbackType === 'string' ? complaint.complaintFeedbackType.toLowerCase() : 'abuse',
  };
}

/** JSON as sent, or with the line folds a mail system put into its long lines ("…Nya!\n aan…") taken out. */
function parseJson(text: string): Json | null {
  for (const candidate of [text, text.replace(/\r?\n[ \t]/g, '')]) {
    try {
      const v = JSON.parse(candidate) as unknown;
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
    } catch {
      // not JSON, or folded: try the next reading
    }
  }
  return null;
}
