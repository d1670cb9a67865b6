import { randomUUID } from 'node:crypto';
import type { Transform } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';

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
  /** a report the appliance mails (Email.reportType): `tlsrpt` makes the message a multipart/report (RFC 8460 §5.3) */
  reportType?: 'tlsrpt' | null;
}

/**
 * The RFC 5322 message, built once per email by nodemailer's composer:
 * text and html as alternatives, content_id attachments inline (related),
 * others mixed. Bcc never appears in the headers. The composer is told not
 * to read files or URLs: every byte it gets was checked at acceptance.
 *
 * The composer makes the MIME tree (headers, encodings, boundaries); the
 * tree is written out by `writeTree`, in one synchronous pass, instead of
 * by the composer's own stream pipeline. That pipeline was most of the cost
 * of an outgoing message on its thread (~250 µs for a 3 KB message: a stream,
 * a pipeline and a timer turn per part), for the same bytes. The common
 * message does not need the composer at all (plainMime, below). `base`: the
 * boundaries' random part.
 */
export function buildMime(m: MimeInput, base = boundaryBase()): Promise<Buffer> {
  const plain = plainMime(m, base);
  if (plain) return Promise.resolve(crlf(plain));
  const composer = mimeComposer(m, base);
  const written = writeTree(compiled(composer, m));
  return written ? Promise.resolve(crlf(written)) : compiled(composer, m).build().then(crlf);
}

/** The composer would draw it with crypto.randomBytes once per part (a few µs each); a pooled UUID is as unique. */
const boundaryBase = () => randomUUID().replace(/-/g, '').slice(0, 16);

/**
 * The composer's tree. A TLS report's root (text, then the gzipped report: multipart/mixed as
 * composed) becomes the multipart/report RFC 8460 §5.3 asks for; its boundary stays the node's.
 */
function compiled(composer: MailComposer, m: MimeInput): MimeNode {
  const root = composer.compile();
  if (m.reportType === 'tlsrpt') root.setHeader('Content-Type', 'multipart/report; report-type="tlsrpt"');
  return root;
}

const BARE_NEWLINE = /\r(?!\n)|(?<!\r)\n/g;

/**
 * Every line ends in CRLF, as SMTP carries it (RFC 5322 §2.3). The composer
 * keeps a 7bit or 8bit text part's bare LFs as the client sent them; the
 * SMTP client turns them into CRLF on the wire, after the DKIM signature was
 * computed over the LFs, and the receiver's body hash then differs.
 */
function crlf(raw: Buffer): Buffer {
  const s = raw.toString('latin1');
  BARE_NEWLINE.lastIndex = 0;
  return BARE_NEWLINE.test(s) ? Buffer.from(s.replace(BARE_NEWLINE, '\r\n'), 'latin1') : raw;
}

/** The composer for a message; each `compile()` gives a fresh tree of the same message (same boundaries). */
export function mimeComposer(m: MimeInput, base = boundaryBase()): MailComposer {
  return new MailComposer({
    from: m.from,
    to: m.to,
    ...(m.cc.length ? { cc: m.cc } : {}),
    ...(m.replyTo?.length ? { replyTo: m.replyTo } : {}),
    subject: m.subject,
    ...(m.text !== null ? { text: m.text } : {}),
    ...(m.html !== null ? { html: m.html } : {}),
    headers: m.headers,
    attachments: m.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      ...(a.contentType ? { contentType: a.contentType } : {}),
      ...(a.contentId ? { cid: a.contentId } : {}),
    })),
    messageId: m.messageId,
    date: m.date,
    baseBoundary: base,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
}

/** The members of a composer's tree node that `MimeNode.stream` reads (nodemailer 10.x). */
interface TreeNode {
  content?: unknown;
  contentType?: string;
  multipart?: string | false;
  boundary?: string;
  childNodes: TreeNode[];
  newline?: string;
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
  buildHeaders(): string;
  getTransferEncoding(): string | false;
}

/**
 * The bytes `root.build()` would give, in the order `MimeNode.stream` writes
 * them: a part's headers, a blank line, its content through nodemailer's own
 * quoted-printable or base64 encoder (fed in one piece, as the stream would
 * be), then each child after its boundary line, and a final CRLF. Returns
 * null for a tree it does not know to write the same way (raw parts,
 * transforms, newline conversion, content that is not a string or Buffer);
 * the composer's stream then builds it.
 */
export function writeTree(root: MimeNode): Buffer | null {
  const node = root as unknown as TreeNode;
  if (node.newline || node._transforms.length || node._processFuncs.length) return null;
  const out: Buffer[] = [];
  if (!writeNode(node, out)) return null;
  return endedWithNewline(out);
}

/** As the composer's LastNewline: the message ends with a line break (after the last byte written, empty chunks aside). */
function endedWithNewline(out: Buffer[]): Buffer {
  const last = out.findLast((b) => b.length > 0);
  const lastByte = last?.[last.length - 1];
  if (lastByte === 0x0d) out.push(Buffer.from('\n'));
  else if (lastByte !== 0x0a) out.push(Buffer.from('\r\n'));
  return Buffer.concat(out);
}

function writeNode(node: TreeNode, out: Buffer[]): boolean {
  // as MimeNode.stream decides it: a raw part is written as given, which this does not do
  if (node._raw) return false;
  const transferEncoding = node.getTransferEncoding();
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const content = node.content;
  if (content) {
    if (typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    encodeContent(bytes, transferEncoding, !/^text\//i.test(node.contentType ?? ''), out);
  }
  if (!node.multipart) return true;
  for (const [i, child] of node.childNodes.entries()) {
    out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`));
    if (!writeNode(child, out)) return false;
  }
  out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
  return true;
}

/** Runs one of nodemailer's encoder streams over the whole input at once, without the stream around it. */
function encodeWith(encoder: Transform, input: Buffer, out: Buffer[]): void {
  const t = encoder as unknown as {
    push(chunk: string | Buffer, enc?: BufferEncoding): boolean;
    _transform(c: Buffer, e: string, cb: (err?: Error | null) => void): void;
    _flush(cb: (err?: Error | null) => void): void;
  };
  t.push = (chunk, enc) => {
    if (chunk !== null) out.push(typeof chunk === 'string' ? Buffer.from(chunk, enc ?? 'utf8') : chunk);
    return true;
  };
  const failed = (e?: Error | null) => {
    if (e) throw e;
  };
  t._transform(input, 'buffer', failed);
  t._flush(failed);
}

// The common message (text and/or html, no attachment, no header of the caller's, addresses,
// subject and Message-ID in plain ASCII that fit on one line) written straight out, byte for byte
// as the composer writes it (test/unit/plain-mime.test.ts holds it to that): the composer's tree,
// its header names normalized at every get and set and a random draw per part, was ~140 µs of a
// signing thread's ~450 µs per message. Anything else goes through the composer.
const PLAIN_ADDRESS = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/;
const PLAIN_NAMED = /^([A-Za-z0-9]+(?: [A-Za-z0-9]+)*) <([^<>]+)>$/;
const PLAIN_SUBJECT = /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/;
const PLAIN_MESSAGE_ID = /^<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~@-]+>$/;

/** The message as the composer would write it (before crlf), or null when it is not of the common kind. */
export function plainMime(m: MimeInput, base: string): Buffer | null {
  if (m.attachments.length || m.reportType || Object.keys(m.headers).length || !m.to.length) return null;
  if (m.text === '' || m.html === '' || (m.text === null && m.html === null)) return null;
  if (!PLAIN_SUBJECT.test(m.subject) || m.subject.includes('=?') || !PLAIN_MESSAGE_ID.test(m.messageId)) return null;
  const fields: Array<[string, string | null]> = [
    ['From', plainAddresses([m.from])],
    ['To', plainAddresses(m.to)],
    ['Cc', m.cc.length ? plainAddresses(m.cc) : ''],
    ['Reply-To', m.replyTo?.length ? plainAddresses(m.replyTo) : ''],
    ['Subject', m.subject],
    ['Message-ID', m.messageId],
  ];
  const lines: string[] = [];
  for (const [name, value] of fields) {
    if (value === null || `${name}: ${value}`.length >= 76) return null;
    if (value) lines.push(`${name}: ${value}`);
  }
  lines.push(`Date: ${m.date.toUTCString().replace(/GMT/, '+0000')}`);
  const parts: Array<[string, string]> = [];
  if (m.text !== null) parts.push(['text/plain', m.text]);
  if (m.html !== null) parts.push(['text/html', m.html]);
  const out: Buffer[] = [];
  if (parts.length === 1) {
    const [type, content] = parts[0];
    const encoding = transferEncodingOf(content);
    lines.push(`Content-Transfer-Encoding: ${encoding}`, 'MIME-Version: 1.0', `Content-Type: ${type}; charset=utf-8`);
    out.push(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`));
    encodeContent(Buffer.from(content), encoding, false, out);
  } else {
    const boundary = `--_NmP-${base}-Part_1`;
    lines.push('MIME-Version: 1.0', `Content-Type: multipart/alternative;\r\n boundary="${boundary}"`);
    out.push(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`));
    for (const [i, [type, content]] of parts.entries()) {
      const encoding = transferEncodingOf(content);
      out.push(
        Buffer.from(
          `${i > 0 ? '\r\n' : ''}--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n`,
        ),
      );
      encodeContent(Buffer.from(content), encoding, false, out);
    }
    out.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  }
  return endedWithNewline(out);
}

/** `a@b.example, Ann <c@d.example>` as the composer renders plain addresses; null for any other kind. */
function plainAddresses(list: string[]): string | null {
  const out: string[] = [];
  for (const a of list) {
    const named = PLAIN_NAMED.exec(a);
    const address = named ? named[2] : a;
    if (!PLAIN_ADDRESS.test(address)) return null;
    out.push(named ? `${named[1]} <${address}>` : address);
  }
  return out.join(', ');
}

/**
 * The composer's choice for a text part, in one pass: 7bit when it has no 8-bit or control character
 * (tab, CR and LF aside) and no line over 76 characters (between \n, \r, U+2028 and U+2029, as a
 * regular expression's `.` sees lines; anything over 128 KB counts as long); else quoted-printable
 * when letters outnumber those characters, base64 when not.
 */
function transferEncodingOf(content: string): '7bit' | 'quoted-printable' | 'base64' {
  let other = 0;
  let latin = 0;
  let run = 0;
  let long = content.length > 128 * 1024;
  for (let i = 0; i < content.length; i++) {
    const c = content.charCodeAt(i);
    if (c <= 0x08 || c === 0x0b || c === 0x0c || (c >= 0x0e && c <= 0x1f) || c >= 0x80) other++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) latin++;
    run = c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029 ? 0 : run + 1;
    if (run > 76) long = true;
  }
  if (!other && !long) return '7bit';
  return other < latin ? 'quoted-printable' : 'base64';
}

/** A part's content in its transfer encoding, through nodemailer's own encoders; `binary`: not text (quoted-printable then encodes its line breaks too). */
function encodeContent(bytes: Buffer, transferEncoding: string | false, binary: boolean, out: Buffer[]): void {
  if (transferEncoding === 'base64') encodeWith(new Base64Encoder(), bytes, out);
  else if (transferEncoding === 'quoted-printable') encodeWith(new QpEncoder({ binary }), bytes, out);
  else out.push(bytes);
}
