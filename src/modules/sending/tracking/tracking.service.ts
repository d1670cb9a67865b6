import { randomBytes } from 'node:crypto';
import { apiError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import { insertMetaOnce, readMeta } from '../../../store/meta.js';
import type { Store } from '../../../store/store.js';
import { findDomainByName } from '../../deliverability/domains/domains.repo.js';
import { emailEvent } from '../emails/email-events.js';
import { findEmailById } from '../emails/emails.repo.js';
import { insertEvents } from '../../notifying/events/events.repo.js';
import { addTracking } from './rewrite.js';
import { signTrackingToken, verifyTrackingToken, type TrackingClaim, type TrackingKind } from './tracking-token.js';

const KEY_NAME = 'tracking_key';

/**
 * The HMAC key of tracking links, made once per installation and kept in
 * the database, so that every process of a PostgreSQL cluster signs and
 * checks with the same key.
 */
export function trackingKey(store: Store): () => Promise<Buffer> {
  let cached: Promise<Buffer> | null = null;
  const load = async (): Promise<Buffer> => {
    await store.tx((trx) => insertMetaOnce(trx, KEY_NAME, randomBytes(32).toString('hex')));
    return Buffer.from((await readMeta(store.knex, KEY_NAME))!, 'hex');
  };
  return () => {
    cached ??= load().catch((e: unknown) => {
      cached = null;
      throw e;
    });
    return cached;
  };
}

export interface TrackingDeps {
  store: Store;
  clock: Clock;
  /** http.public_url; null turns tracking off */
  publicUrl: string | null;
  key(): Promise<Buffer>;
}

/** One recipient's HTML with its open pixel and/or rewritten links. */
export async function trackedHtml(
  deps: TrackingDeps,
  html: string,
  ids: { emailId: string; recipientId: string },
  want: { opens: boolean; clicks: boolean },
): Promise<string> {
  if (!deps.publicUrl || (!want.opens && !want.clicks)) return html;
  const key = await deps.key();
  const base = deps.publicUrl;
  return addTracking(html, {
    ...(want.opens ? { open: `${base}/t/o/${signTrackingToken(key, { kind: 'open', ...ids })}` } : {}),
    ...(want.clicks
      ? { click: (url: string) => `${base}/t/c/${signTrackingToken(key, { kind: 'click', ...ids, url })}` }
      : {}),
  });
}

/**
 * email.opened / email.clicked for a verified token (interface §6); the
 * email's status does not change. Interface §6 emits them only while that
 * tracking is on for the domain: an open or click of mail sent before the
 * domain turned it off (or was deleted) records nothing; the link still works.
 */
export async function recordTracking(
  deps: TrackingDeps,
  claim: TrackingClaim,
  userAgent: string | null,
): Promise<void> {
  const email = await findEmailById(deps.store.reader, claim.emailId);
  const recipient = email?.recipients.find((r) => r.id === claim.recipientId);
  if (!email || !recipient) return;
  const domain = await findDomainByName(deps.store.reader, email.fromDomain);
  if (
    !domain ||
    domain.projectId !== email.projectId ||
    !(claim.kind === 'click' ? domain.clickTracking : domain.openTracking)
  )
    return;
  const now = deps.clock.now();
  const details = claim.kind === 'click' ? { url: claim.url, user_agent: userAgent } : { user_agent: userAgent };
  await deps.store.tx((trx) =>
    insertEvents(trx, [
      emailEvent(email, claim.kind === 'click' ? 'email.clicked' : 'email.opened', now, recipient.address, details),
    ]),
  );
}

/**
 * What the public /t/ routes use: a token that does not verify is 404; a
 * verified one is recorded (a failure to record is logged, never shown to
 * the mail client) and, for a click, says where to redirect: only ever the
 * URL it signed.
 */
export function trackingService(deps: TrackingDeps, logger: Logger) {
  const follow = async (token: string, kind: TrackingKind, userAgent: string | null): Promise<TrackingClaim> => {
    const claim = verifyTrackingToken(await deps.key(), token);
    if (!claim || claim.kind !== kind) throw apiError('not_found', 'no such tracking link');
    await recordTracking(deps, claim, userAgent).catch((e: unknown) =>
      logger.warn({ err: e }, 'could not record a tracking event'),
    );
    return claim;
  };
  return {
    open: async (token: string, userAgent: string | null): Promise<void> =>
      void (await follow(token, 'open', userAgent)),
    click: async (token: string, userAgent: string | null): Promise<string> =>
      (await follow(token, 'click', userAgent)).url!,
  };
}

export type TrackingService = ReturnType<typeof trackingService>;
