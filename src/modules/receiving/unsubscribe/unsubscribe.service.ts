import type { Knex } from 'knex';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { emailEvent } from '../../sending/emails/email-events.js';
import { markUnsubscribed } from '../../sending/suppressions/suppressions.repo.js';
import { verifyUnsubscribeToken } from './unsubscribe-token.js';
import { unsubscribeContact } from './broadcast-unsubscribe.js';
import { pruneUnsubscribeLinks, subjectOf, type UnsubscribeSubject } from './unsubscribe.repo.js';
import { UNSUBSCRIBE_LINK_DAYS } from '../../sending/emails/unsubscribe-links.repo.js';
import { newId } from '../../../lib/ids.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';

export interface UnsubscribeDeps {
  store: Store;
  clock: Clock;
  /** the installation's tracking key (tracking.service.ts trackingKey): it signs unsubscribe links too */
  key(): Promise<Buffer>;
}

/** How the person unsubscribed: the mail client's one-click POST, the confirmation page's button, or a message to the unsubscribe address. */
export type UnsubscribeMethod = 'one_click' | 'page' | 'mailto';

export interface Unsubscribed {
  address: string;
  /** the sender's domain, for the page */
  domain: string;
  /** false when the address was suppressed already (nothing was recorded again) */
  recorded: boolean;
}

/** Whom a token names, for the confirmation page (a GET changes nothing: link scanners follow links). */
export async function describeToken(
  deps: UnsubscribeDeps,
  token: string,
): Promise<{ address: string; domain: string } | null> {
  const id = verifyUnsubscribeToken(await deps.key(), token);
  const found = id ? await subjectOf(deps.store.reader, id) : null;
  return found ? { address: found.address, domain: found.fromDomain } : null;
}

/**
 * The unsubscription a token asks for: the recipient's address suppressed
 * with reason `unsubscribe` in the email's project (it stops only sends
 * that ask for List-Unsubscribe), or marked so on the suppression it has
 * (which it outlives), and email.unsubscribed, in one transaction.
 * Idempotent: an address that unsubscribed already records nothing.
 * Null for a token that does not verify or names nothing stored.
 */
export async function unsubscribe(
  deps: UnsubscribeDeps,
  token: string,
  method: UnsubscribeMethod,
): Promise<Unsubscribed | null> {
  const id = verifyUnsubscribeToken(await deps.key(), token);
  return id ? deps.store.tx((trx) => recordUnsubscribe(trx, id, deps.clock.now(), method)) : null;
}

/** The unsubscription of one recipient, in the caller's transaction (the inbound listener's for the mailto address). */
export async function recordUnsubscribe(
  trx: Knex.Transaction,
  recipientId: string,
  now: number,
  method: UnsubscribeMethod,
): Promise<Unsubscribed | null> {
  const s = await subjectOf(trx, recipientId);
  if (!s) return null;
  const done = { address: s.address, domain: s.fromDomain };
  const fromBroadcast = s.email ? await unsubscribeContact(trx, s.email, now) : undefined;
  if (fromBroadcast === null) return { ...done, recorded: false };
  if (fromBroadcast) {
    const details = { method, ...(fromBroadcast.topicId ? { topic_id: fromBroadcast.topicId } : {}) };
    await insertEvents(trx, [
      emailEvent(s.email!, 'email.unsubscribed', now, s.address, details),
      ...fromBroadcast.events,
    ]);
    return { ...done, recorded: true };
  }
  if (
    !(await markUnsubscribed(trx, { projectId: s.projectId, address: s.address, emailId: s.emailId, createdAt: now }))
  )
    return { ...done, recorded: false };
  await insertEvents(trx, [
    s.email ? emailEvent(s.email, 'email.unsubscribed', now, s.address, { method }) : eventOfGoneEmail(s, now, method),
  ]);
  return { ...done, recorded: true };
}

/** email.unsubscribed about an email retention has deleted: what the link row knows; stored as an event of no email, which retention prunes by age. */
function eventOfGoneEmail(s: UnsubscribeSubject, now: number, method: UnsubscribeMethod): OutboxEvent {
  return {
    id: newId('event', now),
    projectId: s.projectId,
    type: 'email.unsubscribed',
    emailId: null,
    recipient: s.address,
    simulated: false,
    data: { email_id: s.emailId, environment: 'live', recipient: s.address, details: { method } },
    createdAt: now,
  };
}

export function unsubscribeService(deps: UnsubscribeDeps) {
  return {
    /** the links of emails accepted more than UNSUBSCRIBE_LINK_DAYS ago (the suppressions_prune job) */
    pruneLinks: () =>
      pruneUnsubscribeLinks(deps.store.knex, deps.clock.now() - UNSUBSCRIBE_LINK_DAYS * 86_400_000, 5000),
    describe: (token: string) => describeToken(deps, token),
    unsubscribe: (token: string, method: UnsubscribeMethod) => unsubscribe(deps, token, method),
  };
}

export type UnsubscribeService = ReturnType<typeof unsubscribeService>;
