import { createHmac, timingSafeEqual } from 'node:crypto';

export type TrackingKind = 'open' | 'click';

export interface TrackingClaim {
  kind: TrackingKind;
  emailId: string;
  recipientId: string;
  /** click: the original URL, and nothing else will ever be redirected to */
  url?: string;
}

const b64url = (b: Buffer) => b.toString('base64url');

/**
 * `<payload>.<mac>`: the payload (base64url JSON) says which email,
 * recipient and URL; the MAC (HMAC-SHA256 with the server's tracking key,
 * 128 bits kept) makes it impossible to forge a redirect to anywhere else.
 */
export function signTrackingToken(key: Buffer, claim: TrackingClaim): string {
  const body = [
    claim.kind === 'open' ? 'o' : 'c',
    claim.emailId.slice(4),
    claim.recipientId.slice(4),
    ...(claim.url !== undefined ? [claim.url] : []),
  ];
  const payload = b64url(Buffer.from(JSON.stringify(body), 'utf8'));
  return `${payload}.${mac(key, payload)}`;
}

export function verifyTrackingToken(key: Buffer, token: string): TrackingClaim | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const payload = token.slice(0, dot);
  if (!macMatches(token.slice(dot + 1), mac(key, payload))) return null;
  try {
    const [k, email, recipient, url] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as string[];
    if ((k !== 'o' && k !== 'c') || !email || !recipient) return null;
    if (k === 'c' && typeof url !== 'string') return null;
    return {
      kind: k === 'o' ? 'open' : 'click',
      emailId: `msg_${email}`,
      recipientId: `rcp_${recipient}`,
      ...(k === 'c' ? { url: url } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Compared as text, not as decoded bytes: 16 bytes take 22 base64url
 * characters whose last one carries 4 bits the decoder drops, so several
 * spellings decode alike, and a decoder also skips characters outside the
 * alphabet. Only the one spelling we issued verifies.
 */
function macMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function mac(key: Buffer, payload: string): string {
  return b64url(createHmac('sha256', key).update(payload).digest().subarray(0, 16));
}
