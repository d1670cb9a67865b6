/**
 * A small MIME reader for reports (RFC 2045/2046): headers, the tree of
 * parts, each leaf's text decoded. Bounce and complaint reports need the
 * structure (which part is message/delivery-status, what the returned
 * message's headers say), not a mail client's rendering, and it must never
 * throw on the malformed mail bounce generators write. Pure.
 */

export interface Part {
  headers: Headers;
  /** lower-case type/subtype; text/plain when absent (RFC 2045 §5.2) */
  type: string;
  params: Record<string, string>;
  /** a leaf's content, transfer-decoded and charset-decoded */
  text: string;
  /** the undecoded body (a message/rfc822 part's whole message) */
  raw: string;
  parts: Part[];
}

export class Headers {
  private readonly map = new Map<string, string[]>();

  constructor(block: string) {
    // folded lines, and the parameter lines some bounce generators forget to indent (boundary=… at column 0)
    const unfolded = block.replace(/\r?\n[ \t]+/g, ' ').replace(/;[ \t]*\r?\n(?=[A-Za-z-]+=)/g, '; ');
    for (const line of unfolded.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) continue;
      const list = this.map.get(name) ?? [];
      list.push(decodeWords(utf8(line.slice(colon + 1).trim())));
      this.map.set(name, list);
    }
  }

  get(name: string): string | null {
    return this.map.get(name)?.[0] ?? null;
  }

  all(name: string): string[] {
    return this.map.get(name) ?? [];
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  entries(): Array<[string, string]> {
    return [...this.map].flatMap(([k, vs]) => vs.map((v): [string, string] => [k, v]));
  }
}

const MAX_DEPTH = 8;
const MAX_PARTS = 200;

/** Read a message; `raw` is the message as bytes, or as a string holding one byte per character (latin1). */
export function parseMime(raw: Buffer | string): Part {
  const counter = { parts: 0 };
  const text = typeof raw === 'string' ? raw : raw.toString('latin1');
  // a message saved from an mbox starts with its "From " separator line, which is not a header
  return parsePart(text.startsWith('From ') ? text.slice(text.indexOf('\n') + 1) : text, 0, counter);
}

function parsePart(raw: string, depth: number, counter: { parts: number }): Part {
  counter.parts++;
  const split = /\r?\n\r?\n/.exec(raw);
  const headerBlock = split ? raw.slice(0, split.index) : raw;
  const body = split ? raw.slice(split.index + split[0].length) : '';
  const headers = new Headers(looksLikeHeaders(headerBlock) ? headerBlock : '');
  const realBody = looksLikeHeaders(headerBlock) ? body : raw;
  const { type, params } = contentType(headers.get('content-type'));
  const part = new LazyPart(headers, type, params, realBody);
  if (depth >= MAX_DEPTH || counter.parts > MAX_PARTS) return part;
  if (type.startsWith('multipart/') && params.boundary) {
    const { preamble, parts } = splitMultipart(realBody, params.boundary);
    part.parts = parts.slice(0, Math.max(0, MAX_PARTS - counter.parts)).map((p) => parsePart(p, depth + 1, counter));
    // the text before the first boundary is a note for old mail readers, unless it names an address: Courier 0.40
    // writes its notice there, and a report whose boundaries are missing altogether is all preamble
    if (/@/.test(preamble))
      part.parts.unshift(parsePart(`Content-Type: text/plain\n\n${preamble}`, depth + 1, counter));
    return part;
  }
  if (type === 'message/rfc822' || type === 'message/global') {
    const encoding = (headers.get('content-transfer-encoding') ?? '').trim().toLowerCase();
    part.raw =
      encoding === 'base64' || encoding === 'quoted-printable'
        ? transferDecode(realBody, encoding).toString('latin1')
        : realBody;
    part.parts = [parsePart(part.raw, depth + 1, counter)];
    return part;
  }
  part.leaf = true;
  return part;
}

/**
 * A part whose text is decoded when first read: a returned message's own
 * parts (its HTML, its attachments) are seldom looked at. A getter of the
 * class, not one defined on each object, which would leave every part a
 * slow dictionary object.
 */
class LazyPart implements Part {
  parts: Part[] = [];
  /** a leaf has text; a container, and a part past the depth or part limit, has none */
  leaf = false;
  private decoded: string | null = null;

  constructor(
    readonly headers: Headers,
    readonly type: string,
    readonly params: Record<string, string>,
    public raw: string,
  ) {}

  get text(): string {
    if (!this.leaf) return '';
    return (this.decoded ??= charsetDecode(
      transferDecode(this.raw, this.headers.get('content-transfer-encoding')),
      this.params.charset,
    ));
  }
}

/** Every part of the tree, depth first, the root included. */
export function walk(part: Part): Part[] {
  return [part, ...part.parts.flatMap(walk)];
}

function looksLikeHeaders(block: string): boolean {
  return /^[\x21-\x39\x3b-\x7e]+:/.test(block);
}

export function contentType(value: string | null): { type: string; params: Record<string, string> } {
  if (!value) return { type: 'text/plain', params: {} };
  const [head, ...rest] = splitParams(value);
  // a parameter whose semicolon was forgotten ("text/plain charset=…") is still a parameter
  const [type, ...loose] = (head ?? '').trim().split(/\s+/);
  const params: Record<string, string> = {};
  for (const p of [...loose, ...rest]) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    const key = p.slice(0, eq).trim().toLowerCase().replace(/\*$/, '');
    params[key] = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/s, '$1');
  }
  return { type: (type ?? '').toLowerCase() || 'text/plain', params };
}

/** Split on semicolons outside quotes. */
function splitParams(value: string): string[] {
  if (!value.includes('"')) return value.split(';');
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    if (ch === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function splitMultipart(body: string, boundary: string): { preamble: string; parts: string[] } {
  const lines = body.split(/\r?\n/);
  const open = `--${boundary}`;
  const parts: string[] = [];
  const preamble: string[] = [];
  let cur: string[] | null = null;
  let started = false;
  for (const line of lines) {
    const trimmed = line.trimEnd();
    if (trimmed === open || trimmed === `${open}--`) {
      started = true;
      if (cur) parts.push(cur.join('\n'));
      // past the part limit nothing more is read: a hostile report can hold a million empty parts
      cur = trimmed === open && parts.length < MAX_PARTS ? [] : null;
      if (!cur) break;
      continue;
    }
    if (!started) preamble.push(line);
    cur?.push(line);
  }
  // a report cut short (no closing boundary) still yields the parts it has
  if (cur && cur.length) parts.push(cur.join('\n'));
  return { preamble: preamble.join('\n'), parts };
}

function transferDecode(body: string, encoding: string | null): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return Buffer.from(
        body
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      );
    default:
      return Buffer.from(body, 'latin1');
  }
}

export function charsetDecode(bytes: Buffer, charset: string | undefined): string {
  const name = (charset ?? 'utf-8').trim().toLowerCase();
  // 8-bit bytes under a 7-bit charset (ISO-2022-JP, ASCII) are most often UTF-8 that was labelled wrong
  if (/^iso-2022-|^(?:us-)?ascii$/.test(name) && bytes.some((b) => b > 0x7f)) {
    const text = utf8(bytes.toString('latin1'));
    if (text !== bytes.toString('latin1')) return text;
  }
  try {
    return new TextDecoder(name === 'us-ascii' || name === 'ascii' ? 'utf-8' : name).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** Raw 8-bit header bytes are most often UTF-8; keep them as they are when they are not. */
function utf8(latin1: string): string {
  if (!/[\x80-\xff]/.test(latin1)) return latin1;
  const bytes = Buffer.from(latin1, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return latin1;
  }
}

/** RFC 2047 encoded words (=?charset?B|Q?…?=), adjacent words joined. */
export function decodeWords(value: string): string {
  if (!value.includes('=?')) return value;
  return value
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?*]+)(?:\*[^?]*)?\?([BbQq])\?([^?]*)\?=/g, (_, charset: string, enc: string, text: string) => {
      const bytes =
        enc.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9A-Fa-f]{2})/g, (__, h: string) => String.fromCharCode(parseInt(h, 16))),
              'latin1',
            );
      return charsetDecode(bytes, charset);
    });
}
