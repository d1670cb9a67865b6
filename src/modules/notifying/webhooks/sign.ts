import { createHmac, randomBytes } from 'node:crypto';
import type { Endpoint } from './webhooks.repo.js';

/** CONTRACT §4: whsec_ + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * interface §6: `t=<unix>,v1=<hex>[,v1=<hex>]`, each v1 the HMAC-SHA256 of
 * "<t>.<raw body>" keyed with a whole secret string (UTF-8). During a
 * rotation both the new and the old secret sign.
 */
export function signatureHeader(secrets: readonly string[], rawBody: string, unixSeconds: number): string {
  const signed = `${unixSeconds}.${rawBody}`;
  return [
    `t=${unixSeconds}`,
    ...secrets.map((s) => `v1=${createHmac('sha256', Buffer.from(s, 'utf8')).update(signed, 'utf8').digest('hex')}`),
  ].join(',');
}

/** Secrets that sign a request sent at `now`: the current one, and the previous one during its grace period. */
export function signingSecrets(
  e: Pick<Endpoint, 'secret' | 'previousSecret' | 'previousSecretUntil'>,
  now: number,
): string[] {
  return e.previousSecret && e.previousSecretUntil !== null && e.previousSecretUntil > now
    ? [e.secret, e.previousSecret]
    : [e.secret];
}
