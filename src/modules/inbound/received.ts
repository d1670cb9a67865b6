import { simpleParser, type ParsedMail } from 'mailparser';
import { addresses } from '../emails/submitted.js';
import { AS_WRITTEN } from '../emails/read-message.js';

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


/** Parse received mail with mailparser (MIME, charsets, encoded words). */
export async function parseReceived(raw: Buffer): Promise<ReceivedMessage> {
  const m = await simpleParser(raw, AS_WRITTEN);
  return {
    from: m.from?.text ?? '',
    to: addresses(m.to),
    cc: addresses(m.cc),
    subject: m.subject ?? '',
    messageId: m.messageId ?? null,
    text: m.text ?? null,
    html: typeof m.html === 'string' ? m.html : null,
    headers: m.headerLines.map((h) => [h.key, h.line.slice(h.line.indexOf(':') + 1).trim()]),
    attachments: m.attachments.map((a, i) => ({ filename: a.filename ?? `attachment-${i + 1}`, contentType: a.contentType || 'application/octet-stream', size: a.size, contentId: a.cid ?? null })),
  };
}

/** The content of the n-th attachment (0-based, as listed), read again from the stored bytes. */
export async function attachmentContent(raw: Buffer, n: number): Promise<{ content: Buffer; contentType: string; filename: string } | null> {
  const m: ParsedMail = await simpleParser(raw, AS_WRITTEN);
  const a = m.attachments[n];
  return a ? { content: a.content, contentType: a.contentType || 'application/octet-stream', filename: a.filename ?? `attachment-${n + 1}` } : null;
}
