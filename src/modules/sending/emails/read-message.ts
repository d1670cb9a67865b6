import { Headers as SplitHeaders } from '@zone-eu/mailsplit';
import { MailParser, simpleParser, type AddressObject, type HeaderLines } from 'mailparser';

/** mailparser read for the message as written: no derived text or html parts, links left alone. */
export const AS_WRITTEN = {
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
  keepCidLinks: true,
} as const;

/** What submittedEmail reads of a message, as simpleParser gives it. */
export interface ReadMessage {
  from?: AddressObject | undefined;
  to?: AddressObject | AddressObject[] | undefined;
  cc?: AddressObject | AddressObject[] | undefined;
  replyTo?: AddressObject | undefined;
  subject?: string | undefined;
  messageId?: string | undefined;
  text?: string | undefined;
  html?: string | false | undefined;
  attachments: Array<{
    filename?: string | undefined;
    content: Buffer;
    contentType: string;
    cid?: string | undefined;
    related?: boolean | undefined;
  }>;
  headerLines: HeaderLines;
}

// mailparser's own header reading (address lists, Message-ID form, first-of-kind), without its
// streams: one parser, used only for processHeaders, which keeps no state between calls
const headerReader = new MailParser(AS_WRITTEN) as unknown as {
  processHeaders(lines: HeaderLines): Map<string, unknown>;
};

/** A submitted message as simpleParser reads it, the common one-part text message without it. */
export async function readMessage(raw: Buffer): Promise<ReadMessage> {
  return readOnePart(raw) ?? (await simpleParser(raw, AS_WRITTEN));
}

const TEXT_TYPES = new Set(['text/plain', 'text/html']);
const PLAIN_ENCODINGS = new Set(['', '7bit', '8bit']);
const UTF8 = new Set(['utf-8', 'utf8']);

/**
 * The common submitted message, one text/plain or text/html part in UTF-8 or
 * ASCII, neither base64 nor quoted-printable, with ASCII headers and no
 * encoded words, read as simpleParser reads it for a fraction of the cost
 * (simpleParser's streams took ~40% of a submission's CPU). Anything else
 * gives null and goes to simpleParser; test/unit/read-message.test.ts holds the
 * two to the same answers.
 */
export function readOnePart(raw: Buffer): ReadMessage | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end <= 0) return null;
  const head = raw.subarray(0, end + 2);
  const headText = head.toString('latin1');
  // a header name at the very start (not an mbox "From " line, not a folded line), ASCII all
  // through, no encoded words
  if (!/^[!-9;-~]+:/.test(headText) || /[\u0080-\uffff]|=\?/.test(headText)) return null;
  const lines = new SplitHeaders(head).getList() as HeaderLines;
  const headers = headerReader.processHeaders(lines);
  const type = headers.get('content-type') as { value: string; params: Record<string, string> } | undefined;
  const mime = (type?.value ?? 'text/plain').toLowerCase();
  const params = Object.keys(type?.params ?? {});
  if (!TEXT_TYPES.has(mime) || params.some((p) => p !== 'charset') || headers.has('content-disposition')) return null;
  // a single-valued header: mailparser keeps its first value, a string
  const encoding = ((headers.get('content-transfer-encoding') as string | undefined) ?? '').trim().toLowerCase();
  if (!PLAIN_ENCODINGS.has(encoding)) return null;
  const body = raw.subarray(end + 4);
  const charset = (type?.params.charset ?? '').trim().toLowerCase();
  const content = body.toString('utf8').replace(/\r?\n/g, '\n');
  // 8-bit text in another charset (or none named) is simpleParser's to decode; bytes that are not UTF-8 decode to U+FFFD
  if (!UTF8.has(charset) && /[\u0080-\uffff]/.test(content)) return null;
  return {
    from: headers.get('from') as AddressObject | undefined,
    to: headers.get('to') as AddressObject | AddressObject[] | undefined,
    cc: headers.get('cc') as AddressObject | AddressObject[] | undefined,
    replyTo: headers.get('reply-to') as AddressObject | undefined,
    subject: headers.get('subject') as string | undefined,
    messageId: headers.get('message-id') as string | undefined,
    // an HTML-only message's text is '' with skipHtmlToText, and an empty part gives neither, as simpleParser has it
    ...(!content ? {} : mime === 'text/plain' ? { text: content } : { text: '', html: content }),
    attachments: [],
    headerLines: lines,
  };
}
