import { InputRefused } from '../../lib/input-refused.js';
import { readReport, type Report } from '../bounces/report.js';
import { reportsOfMessage, type MailedReports } from '../dmarc/report-mail.js';
import { parseReceived, type ReceivedMessage } from './received.js';

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
