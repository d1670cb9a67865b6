import { createHash, sign, type KeyObject } from 'node:crypto';

export interface DkimOptions {
  domainName: string;
  selector: string;
  privateKey: KeyObject;
  headerFieldNames?: string[];
  /** seconds since the epoch, for t= */
  now?: () => number;
  /**
   * Where the RSA operation runs: `pool` (libuv's thread pool, off the calling event loop: for
   * the MTA's own thread) or `here` (a signing thread, whose whole job it is: the hop to the pool
   * and back cost ~40 µs of CPU a message, a sixth of the signature itself).
   */
  rsa?: 'pool' | 'here';
}

/**
 * Headers covered by the signature. From is listed twice: the second,
 * absent instance signs "no further From", so a From added in transit
 * breaks the signature (RFC 6376 §8.15, oversigning).
 */
const DEFAULT_HEADERS = [
  'from',
  'from',
  'to',
  'cc',
  'subject',
  'date',
  'message-id',
  'reply-to',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'list-unsubscribe',
  'list-unsubscribe-post',
  // RFC 8460 §5.3: a TLS report's mail SHOULD sign these
  'tls-report-domain',
  'tls-report-submitter',
];

/**
 * An RFC 6376 signer: rsa-sha256, relaxed/relaxed canonicalization, whole
 * body. Signing a Buffer in memory with a parsed KeyObject keeps it to one
 * hash pass and one RSA operation per message; the RSA operation (most of
 * the cost, near a millisecond) runs on libuv's thread pool, not on the
 * event loop.
 */
export function createDkimSigner(o: DkimOptions): (raw: Buffer) => Promise<Buffer> {
  const wanted = o.headerFieldNames ?? DEFAULT_HEADERS;
  return async (raw) => {
    const split = raw.indexOf('\r\n\r\n');
    const headerText = (split < 0 ? raw : raw.subarray(0, split)).toString('binary');
    const body = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);
    const headers = parseHeaders(headerText);
    const bh = createHash('sha256').update(relaxedBody(body)).digest('base64');

    // RFC 6376 §5.4.2: several instances of a name are signed from the bottom up.
    const used = new Map<string, number>();
    const signedNames: string[] = [];
    const lines: string[] = [];
    for (const name of wanted) {
      const all = headers.filter((h) => h.name === name);
      const n = used.get(name) ?? 0;
      const h = all[all.length - 1 - n];
      if (!all.length) continue;
      used.set(name, n + 1);
      signedNames.push(name);
      if (h) lines.push(relaxedHeader(h.name, h.value));
    }
    const t = Math.floor(o.now ? o.now() : Date.now() / 1000);
    // The signature covers the header exactly as it will be sent (folded), with an empty b=.
    const unsigned = fold(
      `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${o.domainName}; s=${o.selector}; t=${t}; h=${signedNames.join(':')}; bh=${bh}; b=`,
    );
    const data = lines.map((l) => `${l}\r\n`).join('') + relaxedHeader('dkim-signature', unsigned);
    const toSign = Buffer.from(data, 'binary');
    const b = (
      o.rsa === 'here' ? sign('sha256', toSign, o.privateKey) : await signOffThread(toSign, o.privateKey)
    ).toString('base64');
    const header = `DKIM-Signature: ${unsigned}${(b.match(/.{1,72}/g) ?? [b]).join('\r\n\t')}\r\n`;
    return Buffer.concat([Buffer.from(header, 'binary'), raw]);
  };
}

interface Header {
  name: string;
  value: string;
}

function parseHeaders(text: string): Header[] {
  const out: Header[] = [];
  for (const line of text.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length) out[out.length - 1].value += `\r\n${line}`;
    else {
      const i = line.indexOf(':');
      if (i > 0) out.push({ name: line.slice(0, i).trim().toLowerCase(), value: line.slice(i + 1) });
    }
  }
  return out;
}

/** RFC 6376 §3.4.2 */
function relaxedHeader(name: string, value: string): string {
  return `${name.toLowerCase()}:${value
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim()}`;
}

/**
 * RFC 6376 §3.4.4, in one pass over the bytes: a run of WSP inside a line becomes one SP, WSP at a
 * line's end goes, empty lines at the end go, and a last line without CRLF gets one. Lines end in
 * CRLF only (buildMime makes every line end so); a lone CR or LF is content.
 */
export function relaxedBody(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(body.length + 2);
  let o = 0;
  /** where the current line starts in `out` */
  let line = 0;
  /** `out`'s length up to the end of the last line that is not empty */
  let keep = 0;
  let wsp = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x20 || c === 0x09) {
      wsp = true;
    } else if (c === 0x0d && body[i + 1] === 0x0a) {
      // the line's trailing WSP is dropped with the pending run
      wsp = false;
      const empty = o === line;
      out[o++] = 0x0d;
      out[o++] = 0x0a;
      i++;
      if (!empty) keep = o;
      line = o;
    } else {
      if (wsp) {
        out[o++] = 0x20;
        wsp = false;
      }
      out[o++] = c;
    }
  }
  if (o > line) {
    out[o++] = 0x0d;
    out[o++] = 0x0a;
    keep = o;
  }
  return out.subarray(0, keep);
}

/**
 * One tag per line, long values wrapped where FWS is allowed: anywhere in
 * b= and bh= (RFC 6376 §3.5), at the colons of h=. Folding whitespace does
 * not count under relaxed canonicalization.
 */
function fold(value: string): string {
  return value
    .split('; ')
    .map((tag) => {
      if (tag.length <= 72) return tag;
      if (tag.startsWith('b=') || tag.startsWith('bh=')) return (tag.match(/.{1,72}/g) ?? [tag]).join('\r\n\t');
      const lines: string[] = [];
      let cur = '';
      for (const part of tag.split(':')) {
        if (cur && cur.length + part.length + 1 > 72) {
          lines.push(`${cur}:`);
          cur = part;
        } else cur = cur ? `${cur}:${part}` : part;
      }
      lines.push(cur);
      return lines.join('\r\n\t');
    })
    .join(';\r\n\t');
}

function signOffThread(data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    sign('sha256', data, key, (err, signature) => (err ? reject(err) : resolve(signature))),
  );
}
