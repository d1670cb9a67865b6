import { eventsOfEmail, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import { type Store } from '../../../store/store.js';
import { ofItem, ofItemAsync } from './batch-items.js';
import { render, resolveAttachments, type AttachmentFetcher } from './send-content.js';
import type { Principal } from '../../account/keys/principal.js';
import type { Acceptor } from './accept-batch.js';
import type { AcceptRequest, Accepted } from './accept-rules.js';
import type { Email } from './email.js';
import { findEmail, findEmailById, listEmails, type ListFilter } from './emails.repo.js';
import type { SendEmailBody } from './emails.schema.js';
import { checkIdempotencyKey, differentBody, KeysInFlight, requestHash } from './idempotency.js';
import { deleteKeysOlderThan, findAnswer } from './idempotency.repo.js';
import { cancelEmail, keepsQueueRow, reschedule } from './lifecycle.js';
import { prepareEmail, scheduleTime, type PreparedEmail } from './prepare.js';
import { queueRowsOfEmail } from './queue.repo.js';
import { lockForChange, storeChanges } from './store-change.js';
import type { TemplateService } from '../templates/templates.service.js';
import type { Page } from '../../../lib/page.js';

export type { AttachmentFetcher };

export interface EmailDeps {
  store: Store;
  clock: Clock;
  accept: Acceptor;
  templates: Pick<TemplateService, 'renderForSend'>;
  fetchAttachment: AttachmentFetcher;
  idempotencyTtlMs: number;
}

/**
 * POST /v1/emails: validate; with an Idempotency-Key, the answer given to
 * it before (or 409); fetch attachments; then the accept's group commit,
 * which records the key's answer with the email.
 */
async function sendEmail(
  deps: EmailDeps,
  keysInFlight: KeysInFlight,
  principal: Principal,
  body: SendEmailBody,
  requestId: string,
  idempotencyKey: string | undefined,
): Promise<Accepted> {
  const prepared = prepareEmail(body, deps.clock.now());
  checkApproved(principal, [prepared.from.domain]);
  return keyed(deps, keysInFlight, principal, body, idempotencyKey, (idempotency) =>
    accept(deps, principal, prepared, requestId, idempotency),
  );
}

/**
 * POST /v1/emails/batch: up to 100 emails of POST /v1/emails's rules (no attachments), checked
 * all before any is stored, then stored all or none in one commit under one Idempotency-Key; a
 * refusal names the email's index (`[3].to`).
 */
async function sendBatch(
  deps: EmailDeps,
  keysInFlight: KeysInFlight,
  principal: Principal,
  bodies: SendEmailBody[],
  requestId: string,
  idempotencyKey: string | undefined,
): Promise<Accepted> {
  const now = deps.clock.now();
  const prepared = bodies.map((body, i) =>
    ofItem(i, () => {
      if (body.attachments?.length)
        throw validationError('attachments', 'are not taken in a batch: send an email with attachments on its own');
      return prepareEmail(body, now);
    }),
  );
  checkApproved(
    principal,
    prepared.map((p) => p.from.domain),
  );
  return keyed(deps, keysInFlight, principal, bodies, idempotencyKey, async (idempotency) => {
    for (const [i, p] of prepared.entries())
      if (p.template) await ofItemAsync(i, () => render(deps, principal.project.id, p, p.template!));
    const [first, ...more] = prepared;
    return deps.accept.submit({
      project: principal.project,
      environment: principal.key.mode,
      prepared: first,
      attachments: [],
      requestId,
      idempotency,
      more,
    });
  });
}

/** The key may send these: its project is approved for live mail, and a key restricted to a domain sends From it. */
function checkApproved(principal: Principal, fromDomains: readonly string[]): void {
  if (principal.key.mode === 'live' && !principal.project.approved) {
    throw apiError(
      'account_not_approved',
      'live sending waits for this project to be approved; test keys work meanwhile',
    );
  }
  // a key restricted to a domain (docs/projects-and-keys.md); its domain's name is read with it
  const { domainId, domainName } = principal.key;
  if (domainId === null) return;
  if (domainName === null)
    throw apiError('forbidden', `this key may send only from domain ${domainId}, which was removed`);
  const other = fromDomains.find((d) => d.toLowerCase() !== domainName.toLowerCase());
  if (other !== undefined) throw apiError('forbidden', `this key may send only from ${domainName}, not from ${other}`);
}

/**
 * With an Idempotency-Key: the answer given to it before (or 409 for another body, or while the
 * same key is being answered); else `store`, which records the key's answer with what it stores.
 */
async function keyed(
  deps: EmailDeps,
  keysInFlight: KeysInFlight,
  principal: Principal,
  body: unknown,
  idempotencyKey: string | undefined,
  store: (idempotency: AcceptRequest['idempotency']) => Promise<Accepted>,
): Promise<Accepted> {
  if (idempotencyKey === undefined) return store(null);
  checkIdempotencyKey(idempotencyKey);
  const idempotency = { key: idempotencyKey, hash: requestHash(body) };
  const leave = keysInFlight.enter(principal.project.id, idempotencyKey, idempotency.hash);
  try {
    const answer = await findAnswer(
      deps.store.reader,
      principal.project.id,
      idempotencyKey,
      deps.clock.now() - deps.idempotencyTtlMs,
    );
    if (answer && answer.hash !== idempotency.hash) throw differentBody();
    if (answer) {
      // what was read is committed; a retry is told it only once that commit is on disk too
      await deps.store.barrier();
      return { email: null, replay: answer };
    }
    return await store(idempotency);
  } finally {
    leave();
  }
}

// The request is written out whole: a spread adding fields would take V8's slow path on every send.
async function accept(
  deps: EmailDeps,
  principal: Principal,
  prepared: PreparedEmail,
  requestId: string,
  idempotency: AcceptRequest['idempotency'],
): Promise<Accepted> {
  if (prepared.template) await render(deps, principal.project.id, prepared, prepared.template);
  const attachments = await resolveAttachments(deps, prepared.attachments);
  return deps.accept.submit({
    project: principal.project,
    environment: principal.key.mode,
    prepared,
    attachments,
    requestId,
    idempotency,
  });
}

async function getEmail(deps: EmailDeps, projectId: string, id: string): Promise<Email> {
  const e = await findEmail(deps.store.reader, projectId, id);
  if (!e) throw notFound(`email ${id}`);
  return e;
}

/**
 * PATCH /v1/emails/{id}: move a waiting email to another time (now .. 30
 * days); the state machine refuses what is no longer waiting (409).
 */
async function rescheduleEmail(deps: EmailDeps, projectId: string, id: string, when: string): Promise<Email> {
  const now = deps.clock.now();
  // A moment in the past (clock skew, a slow client) means "now"; a real past date is a mistake.
  if (Date.parse(when) < now - 60_000) throw validationError('scheduled_at', 'must not be in the past');
  const at = scheduleTime(when, now, 'scheduled_at') ?? now;
  return deps.store.tx(async (trx) => {
    // the queue worker may be claiming this email in another process right now: its rows, then it
    await lockForChange(trx, [id], { queueRows: true });
    const email = await findEmail(trx, projectId, id);
    if (!email) throw notFound(`email ${id}`);
    const moved = reschedule(email, await queueRowsOfEmail(trx, id), at, now);
    if ('refused' in moved) throw apiError('not_schedulable', moved.refused);
    await storeChanges(trx, [{ ...moved, emailMoved: true }], now);
    return moved.email;
  });
}

/**
 * POST /v1/emails/{id}/cancel and `posthorn email cancel` (any project: `projectId` null): a
 * scheduled email, or a queued one the MTA has not started on, becomes cancelled and none of its
 * recipients gets it; the state machine refuses the rest (409).
 */
export async function cancelEmailById(
  deps: { store: Store; clock: Clock },
  projectId: string | null,
  id: string,
): Promise<Email> {
  const now = deps.clock.now();
  return deps.store.tx(async (trx) => {
    // as for a reschedule: the MTA may be claiming this email in another process right now
    await lockForChange(trx, [id], { queueRows: true });
    const email = projectId === null ? await findEmailById(trx, id) : await findEmail(trx, projectId, id);
    if (!email) throw notFound(`email ${id}`);
    const done = cancelEmail(email, await queueRowsOfEmail(trx, id), now);
    if ('refused' in done) throw apiError('not_schedulable', done.refused);
    const kept = done.rows.filter((q) => keepsQueueRow(done.email, q));
    const dropRows = done.rows.filter((q) => !kept.includes(q)).map((q) => q.id);
    await storeChanges(trx, [{ ...done, rows: kept, dropRows, emailMoved: true }], now);
    return done.email;
  });
}

/** interface §4.1: sending, listing, reading and rescheduling emails. */
export function emailService(deps: EmailDeps) {
  // the keyed sends this service is answering now: another with the same key is refused (409)
  const keysInFlight = new KeysInFlight();
  return {
    send: (principal: Principal, body: SendEmailBody, requestId: string, idempotencyKey: string | undefined) =>
      sendEmail(deps, keysInFlight, principal, body, requestId, idempotencyKey),
    sendBatch: (principal: Principal, bodies: SendEmailBody[], requestId: string, idempotencyKey: string | undefined) =>
      sendBatch(deps, keysInFlight, principal, bodies, requestId, idempotencyKey),
    get: (projectId: string, id: string) => getEmail(deps, projectId, id),
    /** An email's events, oldest first: its timeline. */
    async events(projectId: string, id: string): Promise<OutboxEvent[]> {
      await getEmail(deps, projectId, id);
      return eventsOfEmail(deps.store.reader, id);
    },
    list: (projectId: string, filter: ListFilter): Promise<Page<Email>> =>
      listEmails(deps.store.reader, projectId, filter),
    reschedule: (projectId: string, id: string, when: string) => rescheduleEmail(deps, projectId, id, when),
    cancel: (projectId: string, id: string) => cancelEmailById(deps, projectId, id),
  };
}

export type EmailService = ReturnType<typeof emailService>;

/** The idempotency_purge job: answers older than limits.idempotency_ttl are forgotten. */
export async function purgeIdempotencyKeys(store: Store, olderThan: number): Promise<number> {
  return store.tx((trx) => deleteKeysOlderThan(trx, olderThan));
}
