import { createHmac, timingSafeEqual } from 'node:crypto';

// The token of a contact's preference page link (`/p/<token>`, docs/contacts.md). Pure.
//
// The contact id's 26 characters and 20 hex digits of an HMAC-SHA256 with the installation's
// tracking key (80 bits), domain-separated from the unsubscribe token, which has the same shape
// but names a recipient of one email: a preference link names the person (the contact), and
// stays valid for as long as the contact exists.

const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;

function mac(key: Buffer, id: string): string {
  return createHmac('sha256', key).update(`preferences\u0000${id}`).digest('hex').slice(0, 20);
}

export function signPreferenceToken(key: Buffer, contactId: string): string {
  const id = contactId.slice(contactId.indexOf('_') + 1).toLowerCase();
  return `${id}-${mac(key, id)}`;
}

/** The contact id (`con_…`) a token names, or null when it was not made with this key. */
export function verifyPreferenceToken(key: Buffer, token: string): string | null {
  const [id, given, ...rest] = token.trim().toLowerCase().split('-');
  if (rest.length || !id || !given || !ID.test(id) || !/^[0-9a-f]{20}$/.test(given)) return null;
  return timingSafeEqual(Buffer.from(given), Buffer.from(mac(key, id))) ? `con_${id}` : null;
}

/** The page's address under http.public_url. */
export const preferencesUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/p/${token}`;
