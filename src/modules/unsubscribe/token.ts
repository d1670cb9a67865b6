import { createHmac, timingSafeEqual } from 'node:crypto';

// The token of a recipient's unsubscribe links (docs/unsubscribe.md). Pure.
//
// It goes into an email address's local part (mailto:unsubscribe+<token>@…), which RFC 5321 caps
// at 64 octets and which some systems lower-case: so lower-case letters and digits only, 47
// characters: the recipient id's 26 (Crockford base32) and 20 hex digits of an HMAC-SHA256 with
// the installation's tracking key (80 bits).

const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;

function mac(key: Buffer, id: string): string {
  return createHmac('sha256', key).update(`unsubscribe\u0000${id}`).digest('hex').slice(0, 20);
}

export function signUnsubscribeToken(key: Buffer, recipientId: string): string {
  const id = recipientId.slice(recipientId.indexOf('_') + 1).toLowerCase();
  return `${id}-${mac(key, id)}`;
}

/** The recipient id (`rcp_…`) a token names, or null when it was not made with this key. */
export function verifyUnsubscribeToken(key: Buffer, token: string): string | null {
  const [id, given, ...rest] = token.trim().toLowerCase().split('-');
  if (rest.length || !id || !given || !ID.test(id) || !/^[0-9a-f]{20}$/.test(given)) return null;
  const expected = mac(key, id);
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected)) ? `rcp_${id}` : null;
}
