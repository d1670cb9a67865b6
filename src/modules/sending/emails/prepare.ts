import { parseAddress, type ParsedAddress } from '../../../lib/address.js';
import { validationError } from '../../../lib/errors.js';
import { checkCustomHeaders } from './headers.js';
import { checkAttachmentName, decodeBase64Strict, sniffExecutable } from './attachments.js';
import type { RecipientKind } from './email.js';
import type { SendEmailBody } from './emails.schema.js';

export const MAX_RECIPIENTS = 50;
/** interface §8 "10 MB in total", read as SI megabytes: 10,000,000 decoded bytes. */
export const MAX_ATTACHMENT_BYTES = 10_000_000;
export const MAX_SCHEDULE_AHEAD_MS = 30 * 86_400_000;

export interface PendingAttachment {
  field: string;
  filename: string | null;
  contentType: string | null;
  contentId: string | null;
  /** decoded content, or null when it is still to be downloaded from `path` */
  content: Buffer | null;
  path: string | null;
}

export interface PreparedEmail {
  from: ParsedAddress;
  /** the lists as the client wrote them, shown back on the resource */
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[] | null;
  /** one entry per distinct address: the bare, lower-cased address */
  recipients: Array<{ address: string; kind: RecipientKind }>;
  /** a template send: rendered into subject, html and text before the accept (EmailService) */
  template: { id: string; version: number | null; variables: Record<string, unknown>; language: string | null } | null;
  subject: string;
  html: string | null;
  text: string | null;
  templateId: string | null;
  templateVersion: number | null;
  tags: Record<string, string>;
  headers: Record<string, string>;
  attachments: PendingAttachment[];
  /** null: send now */
  scheduledAt: number | null;
}

/**
 * The rules of interface §4.1 that a JSON schema cannot say, as a pure
 * function of the validated body: content-or-template, recipients (parsed,
 * de-duplicated, at most 50), headers, attachments, scheduling window.
 */
export function prepareEmail(body: SendEmailBody, now: number): PreparedEmail {
  checkContent(body);
  const from = parse(body.from, 'from');
  const lists = { to: body.to ?? [], cc: body.cc ?? [], bcc: body.bcc ?? [] };
  const total = lists.to.length + lists.cc.length + lists.bcc.length;
  if (total === 0) throw validationError('to', 'at least one recipient is required (to, cc or bcc)');
  if (total > MAX_RECIPIENTS)
    throw validationError('to', `at most ${MAX_RECIPIENTS} recipients in total across to, cc and bcc (got ${total})`);
  const recipients: PreparedEmail['recipients'] = [];
  const seen = new Set<string>();
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    lists[kind].forEach((item, i) => {
      const address = parse(item, `${kind}[${i}]`).address.toLowerCase();
      // one copy per address, under the first list that names it
      if (!seen.has(address)) {
        seen.add(address);
        recipients.push({ address, kind });
      }
    });
  }
  (body.reply_to ?? []).forEach((item, i) => parse(item, `reply_to[${i}]`));
  // CONTRACT §4: a line break in a header value would let the client add headers of its own; NUL is
  // no character of a header field at all (RFC 5322 §2.2), as for the custom headers.
  if (body.subject !== undefined && /[\r\n\0]/.test(body.subject))
    throw validationError('subject', 'must not contain CR, LF or NUL characters');
  // PostgreSQL's text cannot hold NUL, and no mail body needs one (RFC 5322 §2.3 forbids it outside binary MIME)
  for (const part of ['html', 'text'] as const)
    if (body[part]?.includes('\0')) throw validationError(part, 'must not contain a NUL character (U+0000)');
  const headerProblem = checkCustomHeaders(body.headers ?? {});
  if (headerProblem) throw validationError(headerProblem.field, headerProblem.message);
  return {
    from: from,
    to: lists.to.map((s) => s.trim()),
    cc: lists.cc.map((s) => s.trim()),
    bcc: lists.bcc.map((s) => s.trim()),
    replyTo: body.reply_to ? body.reply_to.map((s) => s.trim()) : null,
    recipients,
    template:
      body.template_id === undefined
        ? null
        : {
            id: body.template_id,
            version: body.template_version ?? null,
            variables: body.variables ?? {},
            language: body.language ?? null,
          },
    // a template send's content is its rendering, filled in before the accept
    subject: body.subject ?? '',
    html: body.html ?? null,
    text: body.text ?? null,
    templateId: null,
    templateVersion: null,
    tags: body.tags ?? {},
    headers: body.headers ?? {},
    attachments: prepareAttachments(body),
    scheduledAt: scheduleTime(body.scheduled_at, now, 'scheduled_at'),
  };
}

function checkContent(body: SendEmailBody): void {
  const hasContent = body.subject !== undefined || body.html !== undefined || body.text !== undefined;
  if (body.template_id !== undefined) {
    if (hasContent)
      throw validationError(
        'template_id',
        'cannot be combined with subject, html or text: send either content or a template',
      );
    return;
  }
  for (const f of ['template_version', 'variables', 'language'] as const) {
    if (body[f] !== undefined) throw validationError(f, 'is only allowed with template_id');
  }
  if (body.subject === undefined) throw validationError('subject', 'is required (or send a template_id)');
  if (body.html === undefined && body.text === undefined) throw validationError('html', 'html or text is required');
}

function parse(input: string, field: string): ParsedAddress {
  const r = parseAddress(input);
  if (!r.ok) throw validationError(field, r.reason);
  return r.value;
}

function prepareAttachments(body: SendEmailBody): PendingAttachment[] {
  let total = 0;
  return (body.attachments ?? []).map((a, i) => {
    const field = `attachments[${i}]`;
    if ((a.content === undefined) === (a.path === undefined))
      throw validationError(field, 'needs exactly one of content or path');
    if (a.path !== undefined && !a.path.toLowerCase().startsWith('https://'))
      throw validationError(`${field}.path`, 'must be an https URL');
    const filename = a.filename ?? (a.path ? filenameFromUrl(a.path) : null);
    if (!filename) throw validationError(`${field}.filename`, 'is required');
    if (filename.length > 255)
      throw validationError(
        `${field}.filename`,
        'must be at most 255 characters (it was taken from the path: send a filename)',
      );
    const nameProblem = checkAttachmentName(filename);
    if (nameProblem) throw validationError(`${field}.filename`, nameProblem);
    let content: Buffer | null = null;
    if (a.content !== undefined) {
      content = decodeBase64Strict(a.content);
      if (!content) throw validationError(`${field}.content`, 'is not valid base64');
      checkAttachmentBytes(content, `${field}.content`);
      total += content.length;
      if (total > MAX_ATTACHMENT_BYTES)
        throw validationError('attachments', 'must not exceed 10 MB in total (decoded)');
    }
    return {
      field,
      filename,
      contentType: a.content_type ?? null,
      contentId: a.content_id ?? null,
      content,
      path: a.path ?? null,
    };
  });
}

/** Executables and scripts are refused by their bytes too, whatever they are called; `field` names where the bytes came from (its content, or the file its path gave). */
export function checkAttachmentBytes(content: Buffer, field: string): void {
  const kind = sniffExecutable(content);
  if (kind) throw validationError(field, `looks like an executable or script (${kind}); those are refused`);
}

function filenameFromUrl(url: string): string | null {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return last || null;
  } catch {
    return null;
  }
}

/** RFC 3339 with Z or an offset → epoch ms; the past means "now"; at most 30 days ahead (interface §8). */
export function scheduleTime(value: string | undefined, now: number, field: string): number | null {
  if (value === undefined) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw validationError(field, 'must be a date-time with Z or a numeric offset');
  if (at > now + MAX_SCHEDULE_AHEAD_MS) throw validationError(field, 'must be at most 30 days ahead');
  return at <= now ? null : at;
}
