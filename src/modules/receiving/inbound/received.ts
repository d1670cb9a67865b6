import { simpleParser, type ParsedMail } from 'mailparser';
import { addresses } from '../../sending/emails/submitted.js';
import { AS_WRITTEN } from '../../sending/emails/read-message.js';

/** What the appliance keeps of a received message besides its bytes (CONTRACT §5 inbound_email). */
export interface ReceivedMessage {
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  messageId: string | null;
  text: string | null;
  html: string | null;
  headers: Array<[string, string]>;
  attachments: ReceivedAttachment[];
}

export interface ReceivedAttachment {
  filename: string;
  contentType: string;
  size: number;
  contentId: string | null;
}

/**
 * A header field's text as one line. mailparser unfolds the header's own
 * lines, but an encoded word (RFC 2047) may decode to CR or LF, which would
 * reach the API, webhook payloads and any header a client builds from them.
 * Unfolding as RFC 5322 §2.2.3 does: a line break followed by white space is
 * removed, the white space kept; any other line break becomes a space.
 */
function unfold(text: string): string {
  return text.replace(/(?:\r\n|\r|\n)(?=[ \t])/g, '').replace(/\r\n|\r|\n/g, ' ');
}

/**
 * PostgreSQL's text cannot hold U+0000, and a NUL in received mail (written
 * in the body or encoded in a header) made its insert fail: a 451 the sender
 * retries for days. It is kept as U+FFFD, the character of what could not be
 * read; the stored bytes keep the original.
 */
const withoutNul = (text: string) => text.replaceAll('\0', '\uFFFD');
const headerText = (text: string) => withoutNul(unfold(text));

/** Parse received mail with mailparser (MIME, charsets, encoded words). */
export async function parseReceived(raw: Buffer): Promise<ReceivedMessage> {
  const m = await simpleParser(raw, AS_WRITTEN);
  return {
    from: headerText(m.from?.text ?? ''),
    to: addresses(m.to).map(withoutNul),
    cc: addresses(m.cc).map(withoutNul),
    subject: headerText(m.subject ?? ''),
    messageId: m.messageId ? withoutNul(m.messageId) : null,
    text: m.text === undefined ? null : withoutNul(m.text),
    html: typeof m.html === 'string' ? withoutNul(m.html) : null,
    headers: m.headerLines.map((h) => [h.key, withoutNul(h.line.slice(h.line.indexOf(':') + 1).trim())]),
    attachments: m.attachments.map((a, i) => ({
      filename: withoutNul(a.filename ?? `attachment-${i + 1}`),
      contentType: a.contentType || 'application/octet-stream',
      size: a.size,
      contentId: a.cid ? withoutNul(a.cid) : null,
    })),
  };
}

/** The content of the n-th attachment (0-based, as listed), read again from the stored bytes. */
export async function attachmentContent(
  raw: Buffer,
  n: number,
): Promise<{ content: Buffer; contentType: string; filename: string } | null> {
  const m: ParsedMail = await simpleParser(raw, AS_WRITTEN);
  const a = m.attachments[n];
  return a
    ? {
        content: a.content,
        contentType: a.contentType || 'application/octet-stream',
        filename: a.filename ?? `attachment-${n + 1}`,
      }
    : null;
}
