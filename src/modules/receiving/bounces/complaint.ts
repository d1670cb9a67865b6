import { addressOf, type ReportRecipient } from './dsn.js';
import { Headers, type Part } from './mime.js';
import { bracketed, originalHeaders, originalId } from './original.js';

/**
 * Complaints: ARF feedback reports (RFC 5965), the feedback loops older than ARF, and the
 * unsubscribe requests mail clients send for their users (Apple Mail's "X-Apple-Unsubscribe"),
 * which say "stop sending me this" as plainly as an abuse report does. Pure.
 */

export interface Complaint {
  kind: 'complaint';
  originalMessageId: string | null;
  recipients: ReportRecipient[];
  feedbackType: string | null;
  userAgent: string | null;
}

const complainant = (address: string): ReportRecipient => ({
  address,
  action: 'failed',
  status: null,
  bounceType: null,
  reason: null,
  diagnostic: null,
});

export function readComplaint(text: string, parts: Part[]): Complaint {
  const f = new Headers(text.replace(/\r?\n[ \t]*\r?\n/g, '\n'));
  const original = originalHeaders(parts);
  // every Original-Rcpt-To (a report can name several), else the reported message's To
  const named = [
    ...new Set(
      f
        .all('original-rcpt-to')
        .map((v) => addressOf(v))
        .filter((a): a is string => !!a),
    ),
  ];
  const fallback = addressOf(original?.get('to') ?? '');
  const addresses = named.length ? named : fallback ? [fallback] : [];
  return {
    kind: 'complaint',
    originalMessageId: bracketed(original?.get('message-id') ?? null) ?? originalId(parts[0], parts),
    recipients: addresses.map(complainant),
    feedbackType: (f.get('feedback-type') ?? 'abuse').toLowerCase(),
    userAgent: f.get('user-agent'),
  };
}

/** Feedback loops older than ARF (Hotmail's JMRP before 2013, a few ISPs): the reported message attached, the subject saying it is a complaint. */
export function isOldStyleComplaint(h: Headers, parts: Part[]): boolean {
  return (
    /complaint about message|abuse report|spam report|feedback loop/i.test(h.get('subject') ?? '') &&
    parts.some((p) => p.type === 'message/rfc822')
  );
}

/** A mail client's unsubscribe request on its user's behalf: an opt-out by the sender of the message. */
export function unsubscribeRequest(root: Part): Complaint | null {
  if ((root.headers.get('x-apple-unsubscribe') ?? '').trim().toLowerCase() !== 'true') return null;
  const from = addressOf(root.headers.get('from') ?? '');
  return {
    kind: 'complaint',
    originalMessageId: bracketed(root.headers.get('in-reply-to')),
    recipients: from ? [complainant(from)] : [],
    feedbackType: 'opt-out',
    userAgent: null,
  };
}
