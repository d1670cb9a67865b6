/**
 * What a DNS query must look like before anything parses it. dns2's parser
 * trusts the header's counts: it tries to read as many records as they claim,
 * each one failing on an exception past the end of the packet, so 13 bytes
 * that claim 65,535 records per section cost seconds of the thread that also
 * serves the API. These checks read the header and walk the question's name
 * in plain byte reads; a message that passes has the shape of a query and
 * nothing else, and dns2 is then given its header and question alone, whose
 * reading costs at most a 255-byte name.
 */

/** RFC 1035 §4.1.1 */
const HEADER_BYTES = 12;
/** a question: the root name (1 byte) + QTYPE + QCLASS */
export const MIN_QUESTION_BYTES = 5;
/** a resource record: the root name + TYPE + CLASS + TTL + RDLENGTH (an OPT record is exactly this) */
export const MIN_RECORD_BYTES = 11;
/**
 * The largest message read, on UDP and TCP. A question for the zone is under
 * 300 bytes, and EDNS options (a cookie, padding to a 128-byte block: RFC
 * 8467) keep a real query well under 512; past the question nothing is
 * parsed, so this bound is about memory, not work.
 */
export const MAX_QUERY_BYTES = 4096;
/** RFC 1035 §2.3.4 */
const MAX_NAME_BYTES = 255;
const MAX_LABEL_BYTES = 63;
const OPCODE_QUERY = 0;
const TYPE_OPT = 41;

export type DropReason =
  /** shorter than a header and one question */
  | 'short'
  /** longer than MAX_QUERY_BYTES */
  | 'oversize'
  /** the QR bit is set: an answer is never ours to answer (answering one feeds reflection loops) */
  | 'response'
  /** not a standard QUERY (NOTIFY, UPDATE, IQUERY, …): the zone serves queries only */
  | 'opcode'
  /** not exactly one question (RFC 9619) */
  | 'qdcount'
  /** the header claims more records than the message's length can hold */
  | 'counts'
  /** records a query does not carry: answers, authorities, or more than one additional (the OPT) */
  | 'records'
  /** the question's name is not plain labels ending in the root within the message, followed by QTYPE and QCLASS */
  | 'name'
  /** it passed these checks but dns2 could not read it */
  | 'malformed';

export type CheckedQuery =
  | { drop: DropReason }
  | {
      drop: null;
      /** the offset just past QTYPE and QCLASS: the header and the question are the bytes before it */
      questionEnd: number;
      /** the requestor's UDP payload size from its OPT record (RFC 6891 §6.2.3), or null without one */
      ednsPayloadSize: number | null;
    };

const count = (m: Uint8Array, at: number) => (m[at] << 8) | m[at + 1];

/**
 * Why a DNS message must be dropped unread, or where its question ends: a
 * query (QR 0, opcode QUERY) with one question, no answer or authority
 * records and at most one additional (Unbound's worker_check_request holds
 * queries to the same shape), whose counts fit its length. Never throws.
 */
export function checkQuery(message: Uint8Array): CheckedQuery {
  const reason = checkHeader(message);
  if (reason) return { drop: reason };
  const questionEnd = endOfQuestion(message);
  if (questionEnd < 0) return { drop: 'name' };
  if (count(message, 10) === 1 && questionEnd + MIN_RECORD_BYTES > message.length) return { drop: 'counts' };
  return {
    drop: null,
    questionEnd,
    ednsPayloadSize: count(message, 10) === 1 ? optPayloadSize(message, questionEnd) : null,
  };
}

function checkHeader(message: Uint8Array): DropReason | null {
  if (message.length < HEADER_BYTES + MIN_QUESTION_BYTES) return 'short';
  if (message.length > MAX_QUERY_BYTES) return 'oversize';
  const flags = message[2];
  if (flags & 0x80) return 'response';
  if (((flags >> 3) & 0x0f) !== OPCODE_QUERY) return 'opcode';
  if (count(message, 4) !== 1) return 'qdcount';
  const records = count(message, 6) + count(message, 8) + count(message, 10);
  if (HEADER_BYTES + MIN_QUESTION_BYTES + records * MIN_RECORD_BYTES > message.length) return 'counts';
  if (count(message, 6) !== 0 || count(message, 8) !== 0 || count(message, 10) > 1) return 'records';
  return null;
}

/**
 * The offset past the first question's QTYPE and QCLASS, or -1. Its name
 * must be labels only: a compression pointer refers to an earlier name (RFC
 * 1035 §4.1.4) and the first question has none before it, so a pointer there
 * is a loop or points into the header; 01 and 10 label types are reserved.
 */
export function endOfQuestion(message: Uint8Array): number {
  let at = HEADER_BYTES;
  let nameBytes = 1;
  for (;;) {
    if (at >= message.length) return -1;
    const len = message[at];
    if (len === 0) break;
    if (len > MAX_LABEL_BYTES) return -1;
    nameBytes += len + 1;
    if (nameBytes > MAX_NAME_BYTES) return -1;
    at += len + 1;
  }
  const end = at + 1 + 4;
  return end <= message.length ? end : -1;
}

/** The OPT record's CLASS (the requestor's UDP payload size) when the record at `at` is one: root name, TYPE 41. */
function optPayloadSize(message: Uint8Array, at: number): number | null {
  if (message[at] !== 0 || count(message, at + 1) !== TYPE_OPT) return null;
  return count(message, at + 3);
}
