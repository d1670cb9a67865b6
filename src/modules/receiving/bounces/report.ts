import { addressOf, readDeliveryStatus, type ReportRecipient } from './dsn.js';
import { Headers, parseMime, walk, type Part } from './mime.js';
import { readPlainBounce } from './plain-bounce.js';
import { classifyBounce } from './classify-bounce.js';
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
  const status = parts.find((p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status');
  if (status) {
    const dsn = readDeliveryStatus(status.text);
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

function readComplaint(
  text: string,
  parts: Part[],
): Pick<Report, 'kind' | 'originalMessageId' | 'recipients' | 'feedbackType' | 'userAgent'> {
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
    recipients: addresses.map((address) => ({
      address,
      action: 'failed',
      status: null,
      bounceType: null,
      reason: null,
      diagnostic: null,
    })),
    feedbackType: (f.get('feedback-type') ?? 'abuse').toLowerCase(),
    userAgent: f.get('user-agent'),
  };
}

/** Feedback loops older than ARF (Hotmail's JMRP before 2013, a few ISPs): the reported message attached, the subject saying it is a complaint. */
function isOldStyleComplaint(h: Headers, parts: Part[]): boolean {
  return (
    /complaint about message|abuse report|spam report|feedback loop/i.test(h.get('subject') ?? '') &&
    parts.some((p) => p.type === 'message/rfc822')
  );
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

/** The parts of the report itself, not of a message it returns. */
function ownParts(p: Part): Part[] {
  return p.type.startsWith('message/') ? [] : [p, ...p.parts.flatMap(ownParts)];
}

function plainRecipients(root: Part, parts: Part[]): ReportRecipient[] {
  const failed = root.headers
    .all('x-failed-recipients')
    .flatMap((v) => v.split(','))
    .map((a) => addressOf(a))
    .filter((a): a is string => !!a);
  // the report's own words: not the returned message's body, not attached files
  const own = ownParts(root).filter((p) => !/attachment/i.test(p.headers.get('content-disposition') ?? ''));
  const text =
    own
      .filter((p) => p.type === 'text/plain')
      .map((p) => p.text)
      .join('\n\n') ||
    own
      .filter((p) => p.type === 'text/html')
      .map((p) => htmlText(p.text))
      .join('\n\n');
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
  if (!failed.length) return found;
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
  if (!recipients.some((r) => !r.diagnostic && r.reason === 'other')) return recipients;
  const fromText = plainRecipients(root, parts);
  return recipients.map((r) => {
    const said =
      !r.diagnostic && r.reason === 'other'
        ? fromText.find((t) => t.address === r.address && t.reason !== 'other')
        : undefined;
    if (!said) return r;
    const b = classifyBounce({ status: r.status, diagnostic: said.diagnostic, final: r.action === 'failed' });
    return { ...r, status: b.status, bounceType: b.bounceType, reason: b.reason, diagnostic: b.diagnostic || null };
  });
}

/**
 * The returned message's headers: a message/rfc822 part (not one that is
 * itself a report: a gateway's notice can wrap the DSN, whose own copy is
 * the original), a text/rfc822-headers part, or a message/partial part that
 * holds the message's beginning.
 */
function originalHeaders(parts: Part[]): Headers | null {
  for (const p of parts) {
    if (
      (p.type === 'message/rfc822' || p.type === 'message/global') &&
      p.parts[0] &&
      p.parts[0].type !== 'multipart/report'
    )
      return p.parts[0].headers;
    if (p.type === 'text/rfc822-headers' || p.type === 'message/rfc822-headers' || p.type === 'message/global-headers')
      return new Headers(p.text);
    if (p.type === 'message/partial') return new Headers(p.text.split(/\r?\n\r?\n/)[0]);
  }
  return null;
}

/** The Message-ID of the message a report is about, from the likeliest place to the least. */
function originalId(root: Part, parts: Part[]): string | null {
  const fromPart = bracketed(originalHeaders(parts)?.get('message-id') ?? null);
  if (fromPart) return fromPart;
  // formats that quote the returned headers in their text
  for (const p of parts) {
    if (!p.type.startsWith('text/')) continue;
    const m = /^[ \t>]*Message-I[Dd]:[ \t]*(<[^>\s]+>)/im.exec(p.text);
    if (m) return m[1];
  }
  // a returned message pasted in as a part of its own, its headers read as the part's
  for (const p of parts)
    if (p !== root && p.headers.has('message-id') && p.headers.has('from'))
      return bracketed(p.headers.get('message-id'));
  // said in a sentence: "… the message-id of X-1234@host received from …"
  for (const p of ownParts(root)) {
    const m = /\bmessage-id(?: of| is)?:?[ \t]+<?([^\s<>@]+@[^\s<>,;]+?)>?(?=[\s,;]|\.(?:\s|$)|$)/i.exec(
      p.type.startsWith('text/') ? p.text : '',
    );
    if (m) return `<${m[1]}>`;
  }
  // a bounce sent as a reply to the message (Verizon's)
  return bracketed(root.headers.get('in-reply-to'));
}

function bracketed(value: string | null): string | null {
  if (!value) return null;
  const m = /<[^<>\s]+>/.exec(value);
  if (m) return m[0];
  const bare = value.trim().split(/\s+/)[0];
  return bare && bare.includes('@') ? `<${bare}>` : null;
}

function htmlText(html: string): string {
  return html
    .replace(/<(?:br|\/p|\/div|\/tr|\/li)[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
