import { createHmac, timingSafeEqual } from 'node:crypto';

// One shape for the appliance's signed links without state (unsubscribe, preference page, signup
// confirmation): the id's 26 characters (lower-case Crockford base32, as ids.ts makes them), a
// dash, and hex digits of an HMAC-SHA256 with the installation's tracking key over the kind's
// purpose and the id, so that a token of one kind is never one of another. Lower-case letters,
// digits and one dash: it survives an email address's local part, which some systems lower-case.

export interface IdTokenKind {
  /** the HMAC's domain separation */
  purpose: string;
  /** the id prefix a verified token gives back (`rcp`, `con`, …) */
  prefix: string;
  /** how many hex digits of the HMAC the token carries */
  digits: number;
}

const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;

const mac = (key: Buffer, kind: IdTokenKind, id: string) =>
  createHmac('sha256', key).update(`${kind.purpose}\u0000${id}`).digest('hex').slice(0, kind.digits);

export function signIdToken(key: Buffer, kind: IdTokenKind, id: string): string {
  const bare = id.slice(id.indexOf('_') + 1).toLowerCase();
  return `${bare}-${mac(key, kind, bare)}`;
}

/** The id (`<prefix>_…`) a token names, or null when it was not made with this key for this kind. */
export function verifyIdToken(key: Buffer, kind: IdTokenKind, token: string): string | null {
  const [id, given, ...rest] = token.trim().toLowerCase().split('-');
  if (rest.length || !id || !given || !ID.test(id) || given.length !== kind.digits || !/^[0-9a-f]+$/.test(given))
    return null;
  return timingSafeEqual(Buffer.from(given), Buffer.from(mac(key, kind, id))) ? `${kind.prefix}_${id}` : null;
}
