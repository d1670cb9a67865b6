import { createHmac, randomBytes } from 'node:crypto';
import type { Endpoint } from './webhooks.repo.js';

const SECRET_PREFIX = 'whsec_';

/**
 * CONTRACT §4: whsec_ + base64 of 32 random bytes. The same string serves both signature formats:
 * the service's keys its HMAC with the whole string, Standard Webhooks with the decoded bytes.
 */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
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

/**
 * The key Standard Webhooks derives from a secret shown as `whsec_<base64>`: the decoded bytes
 * (what `new Webhook(secret)` of the standardwebhooks package, and so Resend's SDK, uses).
 */
export function standardSigningKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * Standard Webhooks' `webhook-signature`: `v1,<base64>` per secret, space-separated, each the
 * HMAC-SHA256 of "<msg id>.<unix>.<raw body>" keyed with the secret's decoded bytes.
 */
export function standardSignatureHeader(
  secrets: readonly string[],
  messageId: string,
  rawBody: string,
  unixSeconds: number,
): string {
  const signed = `${messageId}.${unixSeconds}.${rawBody}`;
  return secrets
    .map((s) => `v1,${createHmac('sha256', standardSigningKey(s)).update(signed, 'utf8').digest('base64')}`)
    .join(' ');
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

/**
 * The headers that sign one attempt for the endpoint's signature format. `eventId` is the
 * delivery's idempotency key in both: Service-Event-Id, or Standard Webhooks' webhook-id (and
 * svix-id; the same at every attempt and replay of an event, as both specifications ask).
 */
export function signedHeaders(
  endpoint: Pick<Endpoint, 'signatureFormat' | 'secret' | 'previousSecret' | 'previousSecretUntil'>,
  eventId: string,
  attempt: number,
  rawBody: string,
  now: number,
): Record<string, string> {
  const secrets = signingSecrets(endpoint, now);
  const unix = Math.floor(now / 1000);
  switch (endpoint.signatureFormat) {
    case 'service':
      return {
        'Service-Signature': signatureHeader(secrets, rawBody, unix),
        'Service-Event-Id': eventId,
        'Service-Delivery-Attempt': String(attempt),
      };
    case 'standard': {
      const timestamp = String(unix);
      const signature = standardSignatureHeader(secrets, eventId, rawBody, unix);
      // Svix's names too (Resend delivers through Svix, and its docs have receivers read svix-*
      // into resend.webhooks.verify): the same three values under both names.
      return {
        'webhook-id': eventId,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
        'svix-id': eventId,
        'svix-timestamp': timestamp,
        'svix-signature': signature,
      };
    }
  }
}
