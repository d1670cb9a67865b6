/**
 * Headers the service writes itself (CONTRACT §4), compared case-insensitively.
 * Sender and Resent-* would let a client re-attribute the message; the
 * X-Posthorn- prefix is reserved for the appliance.
 */
const RESERVED = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'dkim-signature',
  'return-path',
  'received',
  'sender',
  'content-transfer-encoding',
  'content-type',
  'content-disposition',
  'content-id',
]);

export const MAX_CUSTOM_HEADERS = 20;

/** A header the service writes (or reserves): a client may not set it. */
export function isServiceHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    RESERVED.has(lower) ||
    lower.startsWith('content-') ||
    lower.startsWith('resent-') ||
    lower.startsWith('x-posthorn-')
  );
}

/** interface §4.1 `headers`: at most 20, names of letters, digits and '-', values up to 998 characters, no CR/LF, none the service sets. */
export function checkCustomHeaders(headers: Record<string, string>): { field: string; message: string } | null {
  const names = Object.keys(headers);
  if (names.length > MAX_CUSTOM_HEADERS)
    return { field: 'headers', message: `at most ${MAX_CUSTOM_HEADERS} custom headers are allowed` };
  for (const name of names) {
    const field = `headers.${name}`;
    const value = headers[name];
    if (!/^[A-Za-z][A-Za-z0-9-]{0,63}$/.test(name))
      return { field, message: 'is not a valid header name (letters, digits and -, starting with a letter)' };
    if (isServiceHeader(name)) {
      return { field, message: 'is set by the service and cannot be overridden' };
    }
    if (typeof value !== 'string') return { field, message: 'must be a string' };
    // CR or LF would start a new header (header injection, RFC 5322 §2.2)
    if (/[\r\n\0]/.test(value)) return { field, message: 'must not contain CR, LF or NUL characters' };
    if (value.length > 998) return { field, message: 'must be at most 998 characters' };
  }
  return null;
}
