import { ID_PREFIX } from '../../../lib/ids.js';

/**
 * VERP (CONTRACT §5): the envelope sender of live mail names the email and
 * the recipient, bounce+<email>-<recipient>@<return path host>, so a bounce
 * says what it is about without guessing from its text. A transaction for
 * several recipients (relay mode) names the email only; the report's
 * recipients then say who failed. Pure.
 */

const ID = '[0-9a-hjkmnp-tv-z]{26}';
const VERP = new RegExp(`^bounce\\+(${ID})(?:-(${ID}))?$`);

export function verpAddress(emailId: string, recipientId: string | null, host: string): string {
  const local = recipientId ? `bounce+${body(emailId)}-${body(recipientId)}` : `bounce+${body(emailId)}`;
  return `${local}@${host}`;
}

/** The email and recipient a return-path address names, or null when it is not one of ours. */
export function readVerp(address: string): { emailId: string; recipientId: string | null; host: string } | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const m = VERP.exec(address.slice(0, at).toLowerCase());
  if (!m) return null;
  return {
    emailId: `${ID_PREFIX.email}_${m[1]}`,
    recipientId: m[2] ? `${ID_PREFIX.recipient}_${m[2]}` : null,
    host: address.slice(at + 1).toLowerCase(),
  };
}

/** The email a Message-ID the appliance wrote names (<body@outbound.hostname>, accept-rules.ts), or null. */
export function emailOfMessageId(messageId: string, hostname: string): string | null {
  const m = new RegExp(`^<(${ID})@([^>]+)>$`).exec(messageId.trim().toLowerCase());
  return m && m[2] === hostname.toLowerCase() ? `${ID_PREFIX.email}_${m[1]}` : null;
}

const body = (id: string) => id.slice(id.indexOf('_') + 1);
