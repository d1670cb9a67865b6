import MailComposer from 'nodemailer/lib/mail-composer';

export interface MimeInput {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; content: Buffer; contentType?: string; contentId?: string }>;
  /** '<id@hostname>' */
  messageId: string;
  date: Date;
}

/**
 * The RFC 5322 message, built once per email by nodemailer's composer:
 * text and html as alternatives, content_id attachments inline (related),
 * others mixed. Bcc never appears in the headers. The composer is told not
 * to read files or URLs: every byte it gets was checked at acceptance.
 */
export function buildMime(m: MimeInput): Promise<Buffer> {
  const composer = new MailComposer({
    from: m.from,
    to: m.to,
    ...(m.cc.length ? { cc: m.cc } : {}),
    ...(m.replyTo?.length ? { replyTo: m.replyTo } : {}),
    subject: m.subject,
    ...(m.text !== null ? { text: m.text } : {}),
    ...(m.html !== null ? { html: m.html } : {}),
    headers: m.headers,
    attachments: m.attachments.map((a) => ({ filename: a.filename, content: a.content, ...(a.contentType ? { contentType: a.contentType } : {}), ...(a.contentId ? { cid: a.contentId } : {}) })),
    messageId: m.messageId,
    date: m.date,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}
