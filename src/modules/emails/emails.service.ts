import { apiError, notFound, validationError } from '../../lib/errors.js';
import type { Clock } from '../../lib/time.js';
import { lockRows, type Store } from '../../store/store.js';
import type { Principal } from '../keys/keys.service.js';
import { emailEvent } from '../events/emit.js';
import { insertEvents } from '../events/events.repo.js';
import type { Acceptor } from './accept.js';
import { guessContentType } from './attachments.js';
import { deliveriesOfEmail, saveDelivery } from './deliveries.repo.js';
import { findEmail, saveEmailState, type Email, type StoredAttachment } from './emails.repo.js';
import { presentEmail } from './emails.presenter.js';
import type { SendEmailBody } from './emails.schema.js';
import { abandonIdempotent, beginIdempotent, checkIdempotencyKey, requestHash } from './idempotency.js';
import { checkAttachmentBytes, MAX_ATTACHMENT_BYTES, prepareEmail, scheduleTime, type PendingAttachment } from './prepare.js';

/** Downloads an attachment `path` through the SSRF guard; throws an ApiError naming the field on failure. */
export type AttachmentFetcher = (url: string, field: string, maxBytes: number) => Promise<{ content: Buffer; contentType: string | null }>;

export interface EmailDeps {
  store: Store;
  clock: Clock;
  accept: Acceptor;
  fetchAttachment: AttachmentFetcher;
  idempotencyTtlMs: number;
}

export interface SendResult {
  status: number;
  body: unknown;
}

/** POST /v1/emails: validate, claim the Idempotency-Key, fetch attachments, then wait for the group commit. */
export async function sendEmail(deps: EmailDeps, principal: Principal, body: SendEmailBody, requestId: string, idempotencyKey: string | undefined): Promise<SendResult> {
  const now = deps.clock.now();
  const prepared = prepareEmail(body, now);
  const environment = principal.key.mode;
  if (environment === 'live' && !principal.project.approved) {
    throw apiError('account_not_approved', 'live sending waits for this project to be approved; test keys work meanwhile');
  }
  if (idempotencyKey !== undefined) {
    checkIdempotencyKey(idempotencyKey);
    const start = await beginIdempotent(deps.store, principal.project.id, idempotencyKey, requestHash(body), now, deps.idempotencyTtlMs);
    if (start.kind === 'replay') return { status: start.status, body: start.body };
  }
  try {
    const attachments = await resolveAttachments(deps, prepared.attachments);
    const email = await deps.accept.submit({ project: principal.project, environment, prepared, attachments, requestId, idempotencyKey: idempotencyKey ?? null });
    return { status: 202, body: presentEmail(email) };
  } catch (e) {
    if (idempotencyKey !== undefined) await abandonIdempotent(deps.store, principal.project.id, idempotencyKey).catch(() => undefined);
    throw e;
  }
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
      if (fetched.contentType && fetched.contentType.length <= 100 && /^[\w.+-]+\/[\w.+-]+$/.test(fetched.contentType)) contentType ??= fetched.contentType;
      total += content.length;
      if (total > MAX_ATTACHMENT_BYTES) throw validationError('attachments', 'must not exceed 10 MB in total (decoded)');
    }
    out.push({ filename: a.filename!, contentType: contentType ?? guessContentType(a.filename!), contentId: a.contentId, content });
  }
  return out;
}

export async function getEmail(deps: Pick<EmailDeps, 'store'>, projectId: string, id: string): Promise<Email> {
  const e = await findEmail(deps.store.reader, projectId, id);
  if (!e) throw notFound(`email ${id}`);
  return e;
}

/**
 * PATCH /v1/emails/{id}: move a waiting email to another time (now .. 30
 * days). LIFECYCLE: only while `scheduled`, or `queued` with a future
 * scheduled_at; anything sent, cancelled or on its way is 409.
 */
export async function rescheduleEmail(deps: Pick<EmailDeps, 'store' | 'clock'>, projectId: string, id: string, when: string): Promise<Email> {
  const now = deps.clock.now();
  // A moment in the past (clock skew, a slow client) means "now"; a real past date is a mistake.
  if (Date.parse(when) < now - 60_000) throw validationError('scheduled_at', 'must not be in the past');
  const at = scheduleTime(when, now, 'scheduled_at') ?? now;
  return deps.store.tx(async (trx) => {
    // the queue worker may be claiming this email in another process right now
    await lockRows(trx, 'emails', [id]);
    const email = await findEmail(trx, projectId, id);
    if (!email) throw notFound(`email ${id}`);
    const waiting = email.status === 'scheduled' || (email.status === 'queued' && email.scheduledAt !== null && email.scheduledAt > now && email.attempts === 0);
    if (!waiting) throw apiError('not_schedulable', `email ${id} is ${email.status}: only an email still waiting for its scheduled time can be rescheduled`);
    const deliveries = await deliveriesOfEmail(trx, id);
    if (deliveries.some((d) => d.state !== 'queued' || d.attempts > 0)) throw apiError('not_schedulable', `email ${id} is already on its way`);
    const next: Email = { ...email, status: 'scheduled', scheduledAt: at, updatedAt: now };
    await saveEmailState(trx, next);
    for (const d of deliveries) await saveDelivery(trx, { ...d, nextAttemptAt: at, updatedAt: now });
    await insertEvents(trx, [emailEvent(next, 'email.scheduled', now, null, { scheduled_at: new Date(at).toISOString() })]);
    return next;
  });
}
