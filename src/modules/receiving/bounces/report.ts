import { isOldStyleComplaint, readComplaint, unsubscribeRequest } from './complaint.js';
import { addressOf, readDeliveryStatus, type ReportRecipient } from './dsn.js';
import { parseMime, walk, type Headers, type Part } from './mime.js';
import { bracketed, originalHeaders, originalId, ownParts } from './original.js';
import { readPlainBounce } from './plain-bounce.js';
import { classifyBounce } from './classify-bounce.js';
import { statusMeaning } from './status-reasons.js';
import { readSesNotification } from './ses-notification.js';

/**
 * What a message that comes back says (`posthorn inbound parse`): a bounce
 * (RFC 3464 DSN or a mail system's own text), a complaint (ARF, RFC 5965),
 * an auto-reply (RFC 3834, vacation and out-of-office), or other mail. Pure:
 * the inbound listener and the CLI read the same way.
 */
export type ReportKind = 'bounce' | 'complaint' | 'auto_reply' | 'other';

export interface Report {
  kind: ReportKind;
  /** the Message-ID of the message this is about (from its returned copy or headers), brackets included */
  originalMessageId: string | null;
  recipients: ReportRecipient[];
  reportingMta: string | null;
  /** complaints: the ARF Feedback-Type and User-Agent */
  feedbackType: string | null;
  userAgent: string | null;
  /** the report's own headers, for the VERP address it was sent to */
  headers: Headers;
}

export type { ReportRecipient } from './dsn.js';

const BOUNCE_SENDER =
  /^(?:mailer[-_]?daemon|post[-_]?master|mail[-_]?daemon|mail delivery (?:system|subsystem)|mdaemon|bounce[sd]?|nobody|double-bounce|microsoftexchange[0-9a-f]+)\b/i;
const BOUNCE_SUBJECT =
  /undeliver|undelivered|delivery (?:status notification|failure|failed|has failed|problem|report|notification)|returned (?:mail|to sender)|failure notice|mail delivery failed|non[- ]?delivery|could not be delivered|not delivered|delivery error|rejected|mail system error|permanent error|warning: could not send|nicht zustellbar|unzustellbar|エラー|不達|配信|retour|non remis|niet bezorgd|no se puede entregar|error sending/i;
const AUTO_SUBJECT =
  /^(?:(?:re|aw|fw|fwd):\s*)?(?:auto(?:matic|matische)?[ -]?(?:reply|response|respond|antwort|réponse|answer)|réponse automatique|risposta automatica|respuesta automática|out of (?:the )?office|out-of-office|\[?autoreply\]?|vacation|on vacation|away from|abwesen|absence|i am (?:out|away)|on leave|holiday)/i;

export function readReport(raw: Buffer | string): Report {
  const root = parseMime(raw);
  const parts = walk(root);
  const base = { reportingMta: null, feedbackType: null, userAgent: null, headers: root.headers };
  const feedback = parts.find((p) => p.type === 'message/feedback-report');
  if (feedback) return { ...base, ...readComplaint(feedback.text, parts) };
  if (isOldStyleComplaint(root.headers, parts)) return { ...base, ...readComplaint('Feedback-Type: abuse', parts) };
  const unsubscribe = unsubscribeRequest(root);
  if (unsubscribe) return { ...base, ...unsubscribe };
  const status =
    parts.find((p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status') ??
    embeddedStatus(root);
  if (status) {
    const dsn = readDeliveryStatus(status.text, noticeText(root));
    // a report of deliveries only (Postfix's "delivery report that you requested") bounces nothing
    const delivered = dsn.recipients.length && dsn.recipients.every((r) => !r.bounceType);
    if (delivered) return { ...base, kind: 'other', originalMessageId: null, recipients: [] };
    const recipients = dsn.recipients.length ? explained(dsn.recipients, root, parts) : plainRecipients(root, parts);
    return {
      ...base,
      kind: 'bounce',
      originalMessageId: originalId(root, parts),
      recipients,
      reportingMta: dsn.reportingMta,
    };
  }
  const ses = readSesNotification(ownParts(root).find((p) => p.type === 'text/plain' && !p.parts.length)?.text ?? '');
  if (ses) return { ...base, ...ses, feedbackType: ses.feedbackType, userAgent: null };
  if (isPlainBounce(root.headers) || saysUndelivered(root))
    return {
      ...base,
      kind: 'bounce',
      originalMessageId: originalId(root, parts),
      recipients: plainRecipients(root, parts),
    };
  if (isAutoReply(root.headers))
    return {
      ...base,
      kind: 'auto_reply',
      originalMessageId: bracketed(root.headers.get('in-reply-to')),
      recipients: [],
    };
  return { ...base, kind: 'other', originalMessageId: null, recipients: [] };
}

function isPlainBounce(h: Headers): boolean {
  const from = h.get('from') ?? '';
  const sender = from.replace(/^.*<|>.*$/g, '').trim() || from;
  const display = from.replace(/<.*$/, '').replace(/"/g, '').trim();
  return (
    BOUNCE_SENDER.test(sender) ||
    BOUNCE_SENDER.test(display) ||
    BOUNCE_SUBJECT.test(h.get('subject') ?? '') ||
    h.has('x-failed-recipients')
  );
}

/** A notice that says so in its own first lines, under an ordinary sender and subject (KDDI's "Could not be delivered to: <…>"). */
function saysUndelivered(root: Part): boolean {
  const first = ownParts(root).find((p) => p.type === 'text/plain' && !p.parts.length);
  return (
    !!first &&
    /could not be delivered to:|did not reach the following recipient|delivery to the following recipients? (?:failed|has failed)|this is a permanent error|the following addresses had (?:permanent )?(?:fatal )?(?:delivery )?errors/i.test(
      first.text.slice(0, 1500),
    )
  );
}

function isAutoReply(h: Headers): boolean {
  const auto = (h.get('auto-submitted') ?? '').toLowerCase();
  if (auto.startsWith('auto-replied') || auto.startsWith('auto-generated')) return true;
  if (h.has('x-autoreply') || h.has('x-autorespond') || h.has('x-autoresponder') || h.has('x-autogenerated'))
    return true;
  if (/^auto[_-]?reply$/i.test(h.get('precedence') ?? '')) return true;
  return AUTO_SUBJECT.test(h.get('subject') ?? '');
}

function plainRecipients(root: Part, parts: Part[]): ReportRecipient[] {
  const failed = root.headers
    .all('x-failed-recipients')
    .flatMap((v) => v.split(','))
    .map((a) => addressOf(a))
    .filter((a): a is string => !!a);
  const text = noticeText(root);
  const ownOf = (name: string) =>
    root.headers
      .all(name)
      .map((v) => addressOf(v))
      .filter((a): a is string => !!a);
  const original = originalHeaders(parts);
  const found = readPlainBounce(text, {
    ignore: [...ownOf('from'), ...ownOf('to'), ...ownOf('return-path')],
    originalTo: failed.length ? failed : original ? [addressOf(original.get('to') ?? '') ?? ''].filter(Boolean) : [],
  });
  // X-Failed-Recipients that the text never names (a header rewritten on the way) yields to the text
  if (!failed.length || (found.length && !found.some((r) => failed.includes(r.address)))) return found;
  // X-Failed-Recipients (Exim) names exactly who failed; the text says why
  return failed.map(
    (address) =>
      found.find((r) => r.address === address) ?? {
        ...(found[0] ?? readPlainBounce(text, { ignore: [], originalTo: [address] })[0]),
        address,
      },
  );
}

/**
 * A DSN recipient without a Diagnostic-Code and with a status that names no
 * reason (5.0.0) is explained by the report's own text when that quotes the
 * server about the same address ("<a@b>: 550 user unknown").
 */
function explained(recipients: ReportRecipient[], root: Part, parts: Part[]): ReportRecipient[] {
  // no diagnostic and a status that names nothing: the reason is only a guess (undefined, or expired for a delay)
  const unsaid = (r: ReportRecipient) => !r.diagnostic && !statusMeaning(r.status);
  if (!recipients.some(unsaid)) return recipients;
  const fromText = plainRecipients(root, parts);
  return recipients.map((r) => {
    const said = unsaid(r) ? fromText.find((t) => t.address === r.address && t.diagnostic) : undefined;
    if (!said || said.reason === 'undefined') return r;
    const b = classifyBounce({
      status: r.status,
      diagnostic: said.diagnostic,
      final: r.action === 'failed',
      delayed: r.action === 'delayed',
    });
    return { ...r, status: b.status, bounceType: b.bounceType, reason: b.reason, diagnostic: b.diagnostic || null };
  });
}

/**
 * A delivery-status body that lost its own part: a report whose MIME boundaries are broken or
 * missing leaves "Final-Recipient: …" and "Action: …" lines in its text, and they still say most.
 */
function embeddedStatus(root: Part): { text: string } | null {
  const text = noticeText(root);
  const start = /^(?:Reporting-MTA|Final-Recipient|Original-Recipient):/im.exec(text);
  if (!start || !/^Action:/im.test(text.slice(start.index, start.index + 20000))) return null;
  return { text: text.slice(start.index) };
}

/** The report's own words: its text parts (or HTML ones), not the returned message's body, not attached files. */
function noticeText(root: Part): string {
  const own = ownParts(root).filter((p) => !/attachment/i.test(p.headers.get('content-disposition') ?? ''));
  return (
    own
      .filter((p) => p.type === 'text/plain')
      .map((p) => p.text)
      .join('\n\n') ||
    own
      .filter((p) => p.type === 'text/html')
      .map((p) => htmlText(p.text))
      .join('\n\n')
  );
}

function htmlText(html: string): string {
  return html
    .replace(/<(?:br|\/p|\/div|\/tr|\/li)[^<>]{0,200}>/gi, '\n')
    .replace(/<[^<>]{0,4000}>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
