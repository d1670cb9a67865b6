import type { AddressObject } from 'mailparser';
import { readMessage, readOnePart, type ReadMessage } from './read-message.js';
import { isServiceHeader } from './headers.js';
import type { SendEmailBody } from './emails.schema.js';

/** A message submitted over SMTP, as the send request the API would have received. */
export interface Submitted {
  body: SendEmailBody;
  /** the client's Message-ID: the Idempotency-Key of the send, so a resubmission after a lost 250 is not sent twice */
  idempotencyKey: string | undefined;
}

/**
 * The send request of a submitted message. The envelope says who receives
 * it: a recipient the To or Cc header names goes in `to` or `cc`, any other
 * in `bcc`, so a blind copy stays blind. The header From is the sender (the
 * envelope's MAIL FROM when there is none). Headers the API would refuse
 * (those the service writes, CONTRACT §4) are left for the service to write;
 * the others are kept as custom headers, as sent.
 */
export async function submittedEmail(raw: Buffer, envelope: { from: string; to: string[] }): Promise<Submitted> {
  return submittedFrom(await readMessage(raw), envelope);
}

/**
 * A message of at most 4 KB in the common form readOnePart reads (one text
 * part, ASCII headers), with at most 40 header lines and 20 addresses,
 * costs the listener a few tens of microseconds to read (addresses are the
 * costly part): it reads those itself; anything else goes to the parsing
 * pool (docs/security.md).
 */
const HERE = { bytes: 4096, headerLines: 40, at: 20 };

/** The send request of a small common message, read on the calling thread; null: read it on the pool. */
export function submittedEmailHere(raw: Buffer, envelope: { from: string; to: string[] }): Submitted | null {
  if (raw.length > HERE.bytes) return null;
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.subarray(0, end);
  let lines = 0;
  for (let i = head.indexOf(10); i >= 0; i = head.indexOf(10, i + 1)) if (++lines > HERE.headerLines) return null;
  let at = 0;
  for (let i = head.indexOf(64); i >= 0; i = head.indexOf(64, i + 1)) if (++at > HERE.at) return null;
  const m = readOnePart(raw);
  return m && submittedFrom(m, envelope);
}

function submittedFrom(m: ReadMessage, envelope: { from: string; to: string[] }): Submitted {
  const named = (field: AddressObject | AddressObject[] | undefined) =>
    new Set(addresses(field).map((a) => a.toLowerCase()));
  const inTo = named(m.to);
  const inCc = named(m.cc);
  const to: string[] = [];
  const cc: string[] = [];
  const bcc: string[] = [];
  for (const rcpt of envelope.to) {
    const a = rcpt.toLowerCase();
    (inTo.has(a) ? to : inCc.has(a) ? cc : bcc).push(rcpt);
  }
  const body: SendEmailBody = { from: m.from?.text || envelope.from };
  if (to.length) body.to = to;
  if (cc.length) body.cc = cc;
  if (bcc.length) body.bcc = bcc;
  const replyTo = addresses(m.replyTo);
  if (replyTo.length) body.reply_to = replyTo;
  if (m.subject) body.subject = m.subject;
  if (m.text) body.text = m.text;
  if (typeof m.html === 'string' && m.html) body.html = m.html;
  if (m.attachments.length) {
    body.attachments = m.attachments.map((a, i) => ({
      filename: a.filename ?? `attachment-${i + 1}`,
      content: a.content.toString('base64'),
      content_type: a.contentType || 'application/octet-stream',
      ...(a.cid && a.related ? { content_id: a.cid.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) } : {}),
    }));
  }
  const headers: Record<string, string> = {};
  for (const h of m.headerLines) {
    if (isServiceHeader(h.key) || !/^[A-Za-z][A-Za-z0-9-]{0,63}$/.test(h.key)) continue;
    const name = h.line.slice(0, h.line.indexOf(':')).trim();
    headers[name] = h.line
      .slice(h.line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
  }
  if (Object.keys(headers).length) body.headers = headers;
  const messageId = m.messageId?.trim();
  return { body, idempotencyKey: messageId && messageId.length <= 255 ? messageId : undefined };
}

/** The addresses of an address header as mailparser reads it, groups flattened. */
export function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  if (!field) return [];
  return (Array.isArray(field) ? field : [field]).flatMap((f) =>
    f.value.flatMap((v) => (v.address ? [v.address] : (v.group ?? []).map((g) => g.address ?? '').filter(Boolean))),
  );
}
