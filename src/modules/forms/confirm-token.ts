import { createHmac, timingSafeEqual } from 'node:crypto';

// The token of a signup's confirmation link (`/f/<form>/confirm/<token>`, docs/forms.md). Pure.
//
// The submission id's 26 characters and 32 hex digits of an HMAC-SHA256 with the installation's
// tracking key (128 bits), domain-separated from the preference and unsubscribe tokens made with
// the same key. The submission's row says when it was made: the link works for CONFIRM_WINDOW_MS.

const ID = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** How long a confirmation link works, and how long a pending contact waits for it. */
export const CONFIRM_WINDOW_MS = 7 * 86_400_000;

function mac(key: Buffer, id: string): string {
  return createHmac('sha256', key).update(`form-confirm\u0000${id}`).digest('hex').slice(0, 32);
}

export function signConfirmToken(key: Buffer, submissionId: string): string {
  const id = submissionId.slice(submissionId.indexOf('_') + 1).toLowerCase();
  return `${id}-${mac(key, id)}`;
}

/** The submission id (`fsb_…`) a token names, or null when it was not made with this key. */
export function verifyConfirmToken(key: Buffer, token: string): string | null {
  const [id, given, ...rest] = token.trim().toLowerCase().split('-');
  if (rest.length || !id || !given || !ID.test(id) || !/^[0-9a-f]{32}$/.test(given)) return null;
  return timingSafeEqual(Buffer.from(given), Buffer.from(mac(key, id))) ? `fsb_${id}` : null;
}

export const confirmUrl = (publicUrl: string, formId: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/f/${formId}/confirm/${token}`;
