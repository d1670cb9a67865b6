import { InputRefused } from '../../../lib/input-refused.js';
import { readReport, type Report } from '../bounces/report.js';
import { reportsOfMessage, type MailedReports } from '../dmarc/report-mail.js';
import { attachmentContent, parseReceived, type ReceivedMessage } from './received.js';

// Everything the MX listener reads in a message, in one pure step that runs
// on the parsing pool (docs/security.md): the bounce or complaint it may be,
// the mail it is for a receiving address, the DMARC reports it may carry.

/** Which readings a message needs, by the kinds of its envelope recipients. */
export interface InboundNeeds {
  report: boolean;
  received: boolean;
  dmarc: boolean;
}

export interface InboundReading {
  report: Report | null;
  received: ReceivedMessage | null;
  mailed: MailedReports | null;
}

export type ReadInbound = (input: { raw: Uint8Array; needs: InboundNeeds }) => Promise<InboundReading>;

/**
 * A bounce or complaint small and plain enough for the listener to read
 * itself: at most 4 KB, 100 lines and 8 MIME boundary lines, no encoded
 * words and no quoted-printable (the two costly decodings). Bounded so, the
 * bounce reader (ours, linear) takes a few hundred microseconds at most;
 * everything else, and any message mailparser reads, goes to the pool.
 */
export function readableHere(raw: Uint8Array, needs: InboundNeeds): boolean {
  if (needs.received || needs.dmarc || raw.length > HERE.bytes) return false;
  let lines = 0;
  let boundaries = 0;
  for (let i = raw.indexOf(10); i >= 0; i = raw.indexOf(10, i + 1)) {
    if (++lines > HERE.lines) return false;
    // "\n--": a line that may be a MIME boundary
    if (raw[i + 1] === 45 && raw[i + 2] === 45 && ++boundaries > HERE.boundaries) return false;
  }
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  return !text.includes('=?') && !/quoted-printable/i.test(text);
}

const HERE = { bytes: 4096, lines: 100, boundaries: 8 };

/** A message that breaks a limit of the MIME parser (headers, parts, nesting) or cannot be read at all is refused for good. */
export const readInbound: ReadInbound = async ({ raw, needs }) => {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  try {
    return {
      report: needs.report ? readReport(bytes) : null,
      received: needs.received ? await parseReceived(bytes) : null,
      mailed: needs.dmarc ? await reportsOfMessage(bytes) : null,
    };
  } catch (e) {
    throw unreadable(e);
  }
};

/** mailsplit's limits (header block size, child nodes) and any other failure to read hostile MIME: the message's fault. */
export function unreadable(e: unknown): InputRefused {
  if (e instanceof InputRefused) return e;
  const message = e instanceof Error ? e.message : String(e);
  const limit = /max .*(exceeded|size)|child nodes/i.test(message) ? 'mime_limit' : 'unreadable';
  return new InputRefused(limit, `the message could not be read: ${message}`);
}

export type ReadAttachment = (input: {
  raw: Uint8Array;
  index: number;
}) => Promise<{ content: Uint8Array; contentType: string; filename: string } | null>;

/** One attachment of a stored received message (GET /v1/inbound/{id}/attachments/{n}): the message is read again, off the API thread in serve. */
export const readAttachment: ReadAttachment = async ({ raw, index }) => {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  try {
    return await attachmentContent(bytes, index);
  } catch (e) {
    throw unreadable(e);
  }
};
