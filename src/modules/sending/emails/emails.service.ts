import { eventsOfEmail, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import { type Store } from '../../../store/store.js';
import type { Principal } from '../../account/keys/principal.js';
import type { Acceptor } from './accept-batch.js';
import type { AcceptRequest, Accepted } from './accept-rules.js';
import { guessContentType } from './attachments.js';
import type { Email, StoredAttachment } from './email.js';
import { findEmail, listEmails, type ListFilter } from './emails.repo.js';
import type { SendEmailBody } from './emails.schema.js';
import { checkIdempotencyKey, differentBody, KeysInFlight, requestHash } from './idempotency.js';
import { deleteKeysOlderThan, findAnswer } from './idempotency.repo.js';
import { reschedule } from './lifecycle.js';
import {
  checkAttachmentBytes,
  MAX_ATTACHMENT_BYTES,
  prepareEmail,
  scheduleTime,
  type PendingAttachment,
  type PreparedEmail,
} from './prepare.js';
import { queueRowsOfEmail } from './queue.repo.js';
import { lockForChange, storeChanges } from './store-change.js';
import type { TemplateService } from '../templates/templates.service.js';
import type { Page } from '../../../lib/page.js';

/** Downloads an attachment `path` through the SSRF guard; throws an ApiError naming the field on failure. */
export type AttachmentFetcher = (
  url: string,
  field: string,
  maxBytes: number,
) => Promise<{ content: Buffer; contentType: string | null }>;

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
  const now = deps.clock.now();
  const prepared = prepareEmail(body, now);
  const environment = principal.key.mode;
  if (environment === 'live' && !principal.project.approved) {
    throw apiError(
      'account_not_approved',
      'live sending waits for this project to be approved; test keys work meanwhile',
    );
  }
  if (idempotencyKey === undefined) return accept(deps, principal, prepared, requestId, null);
  checkIdempotencyKey(idempotencyKey);
  const idempotency = { key: idempotencyKey, hash: requestHash(body) };
  const leave = keysInFlight.enter(principal.project.id, idempotencyKey, idempotency.hash);
  try {
    const answer = await findAnswer(
      deps.store.reader,
      principal.project.id,
      idempotencyKey,
      now - deps.idempotencyTtlMs,
    );
    if (answer && answer.hash !== idempotency.hash) throw differentBody();
    if (answer) {
      // what was read is committed; a retry is told it only once that commit is on disk too
      await deps.store.barrier();
      return { email: null, replay: answer };
    }
    return await accept(deps, principal, prepared, requestId, idempotency);
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

/** A template send gets its content here, test keys as live ones; the email records what it was rendered from. */
async function render(
  deps: EmailDeps,
  projectId: string,
  prepared: PreparedEmail,
  t: NonNullable<PreparedEmail['template']>,
): Promise<void> {
  const { version, rendered } = await deps.templates.renderForSend(projectId, {
    templateId: t.id,
    version: t.version,
    variables: t.variables,
    language: t.language,
    firstRecipient: prepared.recipients[0].address,
  });
  prepared.subject = rendered.subject;
  prepared.html = rendered.html;
  prepared.text = rendered.text;
  prepared.templateId = t.id;
  prepared.templateVersion = version;
}

async function resolveAttachments(deps: EmailDeps, list: PendingAttachment[]): Promise<StoredAttachment[]> {
  let total = list.reduce((n, a) => n + (a.content?.length ?? 0), 0);
  const out: StoredAttachment[] = [];
  for (const a of list) {
    let content = a.content;
    let contentType = a.contentType;
    if (!content) {
      const fetched = await deps.fetchAttachment(a.path!, `${a.field}.path`, MAX_ATTACHMENT_BYTES - total);
      checkAttachmentBytes(fetched.content, `${a.field}.path`);
      content = fetched.content;
      // the server's Content-Type is a hint only: one that is not a plain type/subtype is not kept
      if (fetched.contentType && fetched.contentType.length <= 100 && /^[\w.+-]+\/[\w.+-]+$/.test(fetched.contentType))
        contentType ??= fetched.contentType;
      total += content.length;
      if (total > MAX_ATTACHMENT_BYTES)
        throw validationError('attachments', 'must not exceed 10 MB in total (decoded)');
    }
    out.push({
      filename: a.filename!,
      contentType: contentType ?? guessContentType(a.filename!),
      contentId: a.contentId,
      content,
    });
  }
  return out;
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

/** interface §4.1: sending, listing, reading and rescheduling emails. */
export function emailService(deps: EmailDeps) {
  // the keyed sends this service is answering now: another with the same key is refused (409)
  const keysInFlight = new KeysInFlight();
  return {
    send: (principal: Principal, body: SendEmailBody, requestId: string, idempotencyKey: string | undefined) =>
      sendEmail(deps, keysInFlight, principal, body, requestId, idempotencyKey),
    get: (projectId: string, id: string) => getEmail(deps, projectId, id),
    /** An email's events, oldest first: its timeline. */
    async events(projectId: string, id: string): Promise<OutboxEvent[]> {
      await getEmail(deps, projectId, id);
      return eventsOfEmail(deps.store.reader, id);
    },
    list: (projectId: string, filter: ListFilter): Promise<Page<Email>> =>
      listEmails(deps.store.reader, projectId, filter),
    reschedule: (projectId: string, id: string, when: string) => rescheduleEmail(deps, projectId, id, when),
  };
}

export type EmailService = ReturnType<typeof emailService>;

/** The idempotency_purge job: answers older than limits.idempotency_ttl are forgotten. */
export async function purgeIdempotencyKeys(store: Store, olderThan: number): Promise<number> {
  return store.tx((trx) => deleteKeysOlderThan(trx, olderThan));
}
