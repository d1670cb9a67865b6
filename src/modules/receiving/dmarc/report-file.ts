import { crc32, inflateRawSync } from 'node:zlib';

/**
 * One attachment of a DMARC aggregate report mail (RFC 7489 §7.2.1.1: "gzip" or "zip",
 * some reporters send plain XML) turned into the report's XML text. The attachment
 * comes from whoever can send us mail, so every size it declares is ignored: bytes
 * are counted as zlib produces them and decompression stops at the limit.
 */

/** Largest attachment read at all: real reports are kilobytes, big senders' a few MB. */
export const MAX_COMPRESSED_BYTES = 10 * 1024 * 1024;
/** Largest XML text handed to the XML reader (it builds a tree of all of it). */
export const MAX_XML_BYTES = 20 * 1024 * 1024;
/** Real reports compress about 10–30:1, very repetitive ones past 100:1; far above that is a bomb, not a report. */
export const MAX_RATIO = 250;
/** Output below this is never a ratio problem (a tiny gzip of a small report can exceed 100:1). */
export const RATIO_FREE_BYTES = 1024 * 1024;
/** A report zip holds one XML file; a few members more (a readme, a signature) are tolerated. */
export const MAX_ZIP_MEMBERS = 4;

export type ReportErrorCode = 'too_large' | 'ratio' | 'not_a_report' | 'corrupt' | 'unsafe_xml';

/** Why an attachment is not a readable aggregate report; `code` is stable, the message is for people. */
export class ReportError extends Error {
  constructor(
    readonly code: ReportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

export type ReportFileFormat = 'zip' | 'gzip' | 'xml';

const ZIP_LOCAL = 0x04034b50;
const ZIP_CENTRAL = 0x02014b50;
const ZIP_END = 0x06054b50;
const ZIP_END_SIZE = 22;
const ZIP_CENTRAL_SIZE = 46;
const ZIP_LOCAL_SIZE = 30;

/** The first non-blank byte after an optional UTF-8 byte order mark. */
function firstMeaningfulByte(bytes: Uint8Array): number | undefined {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i];
}

/** By magic bytes, never by name: reporters name `.zip` files that are gzip and the reverse. */
export function detectFormat(bytes: Uint8Array): ReportFileFormat | null {
  if (
    bytes[0] === 0x50 &&
    bytes[1] === 0x4b &&
    ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6))
  )
    return 'zip';
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  return firstMeaningfulByte(bytes) === 0x3c ? 'xml' : null;
}

/** The output allowed from `compressed` input bytes: the ratio bound, never more than MAX_XML_BYTES. */
export function outputLimit(compressed: number): number {
  return Math.min(MAX_XML_BYTES, Math.max(RATIO_FREE_BYTES, compressed * MAX_RATIO));
}

/** Inflates raw deflate data, stopping as soon as the output passes `limit`. */
function inflateLimited(data: Uint8Array, limit: number, what: string): { output: Buffer; consumed: number } {
  try {
    const { buffer, engine } = inflateRawSync(data, { maxOutputLength: limit, info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    return { output: buffer, consumed: engine.bytesWritten };
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_BUFFER_TOO_LARGE')
      throw new ReportError('corrupt', `${what} does not decompress: ${(e as Error).message}`);
    if (limit >= MAX_XML_BYTES)
      throw new ReportError('too_large', `${what} decompresses to more than ${MAX_XML_BYTES} bytes`);
    throw new ReportError(
      'ratio',
      `${what} decompresses more than ${MAX_RATIO} times its size (stopped at ${limit} bytes)`,
    );
  }
}

function need(bytes: Buffer, offset: number, length: number, what: string): void {
  if (offset < 0 || offset + length > bytes.length)
    throw new ReportError('corrupt', `${what} runs past the end of the file`);
}

/** The gzip header's length (RFC 1952 §2.3): fixed part, then the optional fields FLG announces. */
function gzipHeaderLength(bytes: Buffer): number {
  need(bytes, 0, 10, 'gzip header');
  if (bytes[2] !== 8) throw new ReportError('corrupt', `gzip compression method ${bytes[2]} is not deflate`);
  const flags = bytes[3];
  let p = 10;
  if (flags & 4) {
    need(bytes, p, 2, 'gzip extra field');
    p += 2 + bytes.readUInt16LE(p);
  }
  for (const bit of [8, 16]) {
    if (!(flags & bit)) continue;
    const zero = bytes.indexOf(0, p);
    if (zero < 0) throw new ReportError('corrupt', 'gzip header name or comment is not terminated');
    p = zero + 1;
  }
  if (flags & 2) p += 2;
  need(bytes, p, 0, 'gzip header');
  return p;
}

/**
 * The first gzip member only, checked against its CRC-32 and length trailer. Whatever follows
 * it is ignored: Mimecast appends a CRLF to its .xml.gz, which zlib's gunzip would read as a
 * broken second member.
 */
function gunzipReport(bytes: Buffer): Buffer {
  const start = gzipHeaderLength(bytes);
  const { output, consumed } = inflateLimited(bytes.subarray(start), outputLimit(bytes.length), 'the gzip file');
  const trailer = start + consumed;
  need(bytes, trailer, 8, 'gzip trailer');
  if (bytes.readUInt32LE(trailer) !== crc32(output) || bytes.readUInt32LE(trailer + 4) !== output.length % 2 ** 32) {
    throw new ReportError('corrupt', 'gzip file fails its CRC-32 or length check');
  }
  return output;
}

interface ZipMember {
  name: string;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  localOffset: number;
}

/** The end of central directory record, searched from the end past a comment of up to 64 KiB. */
function findZipEnd(bytes: Buffer): number {
  const stop = Math.max(0, bytes.length - ZIP_END_SIZE - 0xffff);
  for (let i = bytes.length - ZIP_END_SIZE; i >= stop; i--) if (bytes.readUInt32LE(i) === ZIP_END) return i;
  throw new ReportError('corrupt', 'zip file has no central directory (truncated?)');
}

/** The central directory's entries (APPNOTE 4.3.12); the uncompressed sizes it declares are never read. */
function listZipMembers(bytes: Buffer): ZipMember[] {
  const end = findZipEnd(bytes);
  const count = bytes.readUInt16LE(end + 10);
  let p = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || p === 0xffffffff)
    throw new ReportError('corrupt', 'zip64 archives are not read (a report is far smaller)');
  if (count > MAX_ZIP_MEMBERS)
    throw new ReportError('not_a_report', `zip file has ${count} members; a report has one XML file`);
  const members: ZipMember[] = [];
  for (let i = 0; i < count; i++) {
    need(bytes, p, ZIP_CENTRAL_SIZE, 'zip central directory');
    if (bytes.readUInt32LE(p) !== ZIP_CENTRAL)
      throw new ReportError('corrupt', 'zip central directory entry has a bad signature');
    const nameLength = bytes.readUInt16LE(p + 28);
    need(bytes, p + ZIP_CENTRAL_SIZE, nameLength, 'zip member name');
    members.push({
      name: bytes.toString('utf8', p + ZIP_CENTRAL_SIZE, p + ZIP_CENTRAL_SIZE + nameLength),
      flags: bytes.readUInt16LE(p + 8),
      method: bytes.readUInt16LE(p + 10),
      crc: bytes.readUInt32LE(p + 16),
      compressedSize: bytes.readUInt32LE(p + 20),
      localOffset: bytes.readUInt32LE(p + 42),
    });
    p += ZIP_CENTRAL_SIZE + nameLength + bytes.readUInt16LE(p + 30) + bytes.readUInt16LE(p + 32);
  }
  return members;
}

/** The one `.xml` member; macOS resource forks (`__MACOSX/`) and folders do not count. */
function pickXmlMember(members: ZipMember[]): ZipMember {
  const xml = members.filter((m) => /\.xml$/i.test(m.name) && !m.name.startsWith('__MACOSX/'));
  if (xml.length === 1) return xml[0];
  const names = members.map((m) => m.name).join(', ') || 'none';
  if (xml.length === 0) throw new ReportError('not_a_report', `zip file has no .xml member (members: ${names})`);
  throw new ReportError(
    'not_a_report',
    `zip file has ${xml.length} .xml members; a report has one (members: ${names})`,
  );
}

/** The member's compressed bytes, located through its local header (whose extra field may differ). */
function memberData(bytes: Buffer, m: ZipMember): Buffer {
  need(bytes, m.localOffset, ZIP_LOCAL_SIZE, 'zip local header');
  if (bytes.readUInt32LE(m.localOffset) !== ZIP_LOCAL)
    throw new ReportError('corrupt', `zip local header of ${m.name} has a bad signature`);
  const start =
    m.localOffset + ZIP_LOCAL_SIZE + bytes.readUInt16LE(m.localOffset + 26) + bytes.readUInt16LE(m.localOffset + 28);
  need(bytes, start, m.compressedSize, `zip member ${m.name}`);
  return bytes.subarray(start, start + m.compressedSize);
}

function unzipReport(bytes: Buffer): Buffer {
  const member = pickXmlMember(listZipMembers(bytes));
  if (member.flags & 1) throw new ReportError('corrupt', `zip member ${member.name} is encrypted`);
  const data = memberData(bytes, member);
  let output: Buffer;
  if (member.method === 0) output = data;
  else if (member.method === 8)
    output = inflateLimited(data, outputLimit(bytes.length), `zip member ${member.name}`).output;
  else
    throw new ReportError('corrupt', `zip member ${member.name} uses compression method ${member.method}, not deflate`);
  if (crc32(output) !== member.crc)
    throw new ReportError('corrupt', `zip member ${member.name} fails its CRC-32 check`);
  return output;
}

/**
 * UTF-8 per RFC 7489 Appendix C's schema; a stray invalid byte becomes U+FFFD rather than a
 * refusal. Blank lines before the XML declaration are dropped: XML forbids them, senders add them.
 */
function xmlText(bytes: Uint8Array, what: string): string {
  if (firstMeaningfulByte(bytes) !== 0x3c) throw new ReportError('not_a_report', `${what} is not XML`);
  return new TextDecoder('utf-8').decode(bytes).trimStart();
}

/** The XML text of one report attachment; `filename` and `contentType` only make messages clearer. */
export function readReportFile(bytes: Uint8Array, filename?: string, contentType?: string): string {
  const what = [filename, contentType && `(${contentType})`].filter(Boolean).join(' ') || 'the attachment';
  if (bytes.length > MAX_COMPRESSED_BYTES)
    throw new ReportError('too_large', `${what} is ${bytes.length} bytes; at most ${MAX_COMPRESSED_BYTES} are read`);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = detectFormat(buffer);
  switch (format) {
    case 'zip':
      return xmlText(unzipReport(buffer), `the XML member of ${what}`);
    case 'gzip':
      return xmlText(gunzipReport(buffer), `the content of ${what}`);
    case 'xml':
      return xmlText(buffer, what);
    case null:
      throw new ReportError('not_a_report', `${what} is neither a zip, a gzip nor an XML file`);
  }
}
