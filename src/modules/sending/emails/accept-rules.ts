import { apiError, ApiError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import type { Project } from '../../account/projects/projects.repo.js';
import { blocksSend, suppressionKey, type SuppressionReason } from '../suppressions/suppression.js';
import type { Email, Environment, StoredAttachment } from './email.js';
import { presentEmail } from './emails.presenter.js';
import { answerKey, differentBody, type IdempotencyRecord, type RecordedAnswer } from './idempotency.js';
import { acceptEmail, applyOutcomes, claimEmail, claimRow, keepsQueueRow, type EmailDraft } from './lifecycle.js';
import { LimitBook } from './limits.js';
import type { PreparedEmail } from './prepare.js';
import type { QueueRow } from './queue.repo.js';
import { simulateAttempt, SIMULATED_RETRY_MS } from './simulate.js';
import { asksForUnsubscribe, withAutoUnsubscribe } from './list-unsubscribe.js';

/** One POST /v1/emails as it reaches the accept: validated, its attachments resolved. */
export interface AcceptRequest {
  project: Project;
  environment: Environment;
  prepared: PreparedEmail;
  attachments: StoredAttachment[];
  requestId: string;
  /** Idempotency-Key and the hash of the request body */
  idempotency: { key: string; hash: string } | null;
  /** a broadcast's email to one contact (broadcasts/fan-out.ts): it goes on the broadcast stream */
  broadcast?: { id: string; contactId: string };
  /** a report the appliance mails itself (Email.reportType): only its own code sets it */
  reportType?: 'tlsrpt';
  /**
   * POST /v1/emails/batch: the emails after `prepared`, stored with it all or none, in order (one
   * Idempotency-Key for them all); the first refusal refuses them all, naming its index.
   */
  more?: PreparedEmail[];
}

/**
 * What a request got: stored (the email as accepted: queued, attempts 0; a batch's emails, in
 * order, in `batch`), or the answer its key was given before.
 */
export type Accepted = { email: Email; replay: null; batch?: Email[] } | { email: null; replay: RecordedAnswer };

/** The emails a request stores: one, or a batch's (each without the batch's key). */
export function membersOf(req: AcceptRequest): AcceptRequest[] {
  if (!req.more) return [req];
  const one = { ...req, idempotency: null, more: undefined };
  return [req.prepared, ...req.more].map((prepared) => ({ ...one, prepared }));
}

/** A refusal of a batch's email: for the whole batch, naming the email by its index. */
function ofMember(e: ApiError, i: number): ApiError {
  // CONTRACT §4: only a validation error names a field
  return new ApiError(e.status, e.code, `[${i}]: ${e.message}`, undefined, e.headers);
}

/** What the store says about a batch, read in the transaction that stores it. */
export interface AcceptFacts {
  now: number;
  /** suppressed (project, address) pairs, by suppressionKey */
  suppressed: Map<string, SuppressionReason>;
  /** "project|domain" of the From domains verified in the project sending from them, with their one-click unsubscribe setting */
  verified: Map<string, { listUnsubscribe: boolean }>;
  /** the live projects as stored now: a request's copy may be a moment old (key cache) */
  projects: Map<string, Project>;
  /** live recipients counted so far, by "project|period" */
  usage: Map<string, number>;
  /** the answers recorded for the batch's Idempotency-Keys, by answerKey, still within their TTL */
  answered: Map<string, RecordedAnswer>;
}

export interface AcceptSettings {
  /** Message-ID domain (outbound.hostname) */
  hostname: string;
  /** which queue row a recipient goes to: its domain in direct mode, '' for one transaction */
  routeOf(environment: Environment, address: string): string;
  /** CONTRACT §4's test domain: when set, test mail due now is simulated as it is stored (settleSimulated) */
  testDomain?: string | undefined;
}

/** Everything one batch stores, and each request's answer. */
export interface AcceptPlan {
  outcomes: Array<Accepted | ApiError>;
  /** as stored: test mail already simulated, live mail as accepted */
  emails: Email[];
  rows: QueueRow[];
  events: OutboxEvent[];
  attachments: Map<string, StoredAttachment[]>;
  usage: Array<[projectId: string, period: string, n: number]>;
  /** the answers to record for the Idempotency-Keys of accepted requests */
  answers: IdempotencyRecord[];
}

/**
 * The accept's rules (interface §4.1, §7), in arrival order: an Idempotency-
 * Key answered before is answered the same again (409 for another body);
 * a live From domain must be verified in the project; suppressed recipients
 * are skipped and a send to nobody else is refused; the daily and monthly
 * limits count live recipients. What passes enters the state machine.
 */
export function planAccept(batch: AcceptRequest[], facts: AcceptFacts, settings: AcceptSettings): AcceptPlan {
  const { now } = facts;
  const plan: AcceptPlan = {
    outcomes: [],
    emails: [],
    rows: [],
    events: [],
    attachments: new Map(),
    usage: [],
    answers: [],
  };
  const limits = new LimitBook(facts.usage, now);
  const answered = new Map(facts.answered);
  for (const req of batch) {
    const earlier = req.idempotency ? answered.get(answerKey(req.project.id, req.idempotency.key)) : undefined;
    if (earlier) {
      plan.outcomes.push(earlier.hash === req.idempotency!.hash ? { email: null, replay: earlier } : differentBody());
      continue;
    }
    const members = membersOf(req);
    const refusal = firstRefusal(members, facts, limits);
    if (refusal) {
      plan.outcomes.push(req.more ? ofMember(refusal.error, refusal.index) : refusal.error);
      continue;
    }
    const emails = members.map((m) => acceptOne(m, plan, facts, settings));
    plan.outcomes.push({ email: emails[0], replay: null, ...(req.more ? { batch: emails } : {}) });
    if (req.idempotency) {
      // the 202 shows the email as accepted (queued, attempts 0), whatever its simulation did next
      const body = req.more ? { object: 'list', data: emails.map(presentEmail) } : presentEmail(emails[0]);
      const answer: RecordedAnswer = { hash: req.idempotency.hash, status: 202, body };
      answered.set(answerKey(req.project.id, req.idempotency.key), answer);
      plan.answers.push({
        projectId: req.project.id,
        key: req.idempotency.key,
        createdAt: now,
        hash: answer.hash,
        status: answer.status,
        body: answer.body,
      });
    }
  }
  plan.usage = limits.increments();
  return plan;
}

/** The first of a request's emails the rules refuse; then none of them counts toward the limits. */
function firstRefusal(
  members: AcceptRequest[],
  facts: AcceptFacts,
  limits: LimitBook,
): { error: ApiError; index: number } | null {
  const mark = limits.mark();
  for (const [index, m] of members.entries()) {
    const error = refuse(m, facts, limits);
    if (error) {
      limits.reset(mark);
      return { error, index };
    }
  }
  return null;
}

/** One email that passed the rules, into the plan: as accepted, test mail simulated at once. */
function acceptOne(req: AcceptRequest, plan: AcceptPlan, facts: AcceptFacts, settings: AcceptSettings): Email {
  const { email, rows, events } = acceptEmail(draftOf(req, facts, settings), routed(req, facts, settings), facts.now);
  if (req.attachments.length) plan.attachments.set(email.id, req.attachments);
  plan.events.push(...events);
  // after the accept's own events, as if the worker had claimed it a moment later
  const simulated = settleSimulated(email, rows, facts.now, settings.testDomain);
  plan.emails.push(simulated?.email ?? email);
  plan.rows.push(...(simulated?.rows ?? rows));
  plan.events.push(...(simulated?.events ?? []));
  return email;
}

function refuse(req: AcceptRequest, facts: AcceptFacts, limits: LimitBook): ApiError | null {
  const { prepared, project } = req;
  if (req.environment === 'live' && !facts.verified.has(`${project.id}|${prepared.from.domain}`)) {
    return apiError(
      'domain_not_verified',
      `the From domain ${prepared.from.domain} is not a verified domain of this project`,
    );
  }
  const sendable = recipientsOf(req, facts).filter((r) => !r.suppressed);
  if (!sendable.length)
    return apiError('recipient_suppressed', 'every recipient is on the suppression list; nothing was queued');
  if (req.environment === 'live')
    return limits.take(facts.projects.get(project.id) ?? project, sendable.length, req.broadcast !== undefined);
  return null;
}

/** The headers stored: a verified domain that asks for one-click unsubscribe on every send adds `<auto>`. */
function headersOf(req: AcceptRequest, facts: AcceptFacts): Record<string, string> {
  const domain = facts.verified.get(`${req.project.id}|${req.prepared.from.domain}`);
  return req.environment === 'live' && domain?.listUnsubscribe
    ? withAutoUnsubscribe(req.prepared.headers)
    : req.prepared.headers;
}

function draftOf(req: AcceptRequest, facts: AcceptFacts, settings: AcceptSettings): EmailDraft {
  const { prepared } = req;
  const now = facts.now;
  const id = newId('email', now);
  return {
    id,
    projectId: req.project.id,
    environment: req.environment,
    from: prepared.from.formatted,
    fromDomain: prepared.from.domain,
    to: prepared.to,
    cc: prepared.cc,
    bcc: prepared.bcc,
    replyTo: prepared.replyTo,
    subject: prepared.subject,
    html: prepared.html,
    text: prepared.text,
    templateId: prepared.templateId,
    templateVersion: prepared.templateVersion,
    tags: prepared.tags,
    headers: headersOf(req, facts),
    requestId: req.requestId,
    scheduledAt: prepared.scheduledAt,
    messageId: `<${id.slice(4)}@${settings.hostname}>`,
    createdAt: now,
    broadcastId: req.broadcast?.id ?? null,
    contactId: req.broadcast?.contactId ?? null,
    reportType: req.reportType ?? null,
    attachmentCount: req.attachments.length,
  };
}

/** The recipients, each with the suppression that stops this send, if any (an unsubscription stops only sends that ask for List-Unsubscribe). */
function recipientsOf(req: AcceptRequest, facts: AcceptFacts) {
  const asks = asksForUnsubscribe(headersOf(req, facts));
  return req.prepared.recipients.map((r) => {
    const reason = facts.suppressed.get(suppressionKey(req.project.id, r.address));
    return { address: r.address, kind: r.kind, suppressed: reason && blocksSend(reason, asks) ? reason : null };
  });
}

function routed(req: AcceptRequest, facts: AcceptFacts, settings: AcceptSettings) {
  return recipientsOf(req, facts).map((r) => ({ ...r, route: settings.routeOf(req.environment, r.address) }));
}

/**
 * Test mail due now never waits for the queue: its first simulated attempt
 * (claimed, then its outcome) is applied here, so the email is stored in
 * the state the worker would have left it in a moment later, with the same
 * events, and no second transaction rewrites it. A simulated delay stays in
 * the queue for its retry; scheduled test mail waits like any other. Its
 * queue row is dropped when the walk is over and nothing could put it back.
 */
function settleSimulated(
  email: Email,
  rows: QueueRow[],
  now: number,
  testDomain: string | undefined,
): { email: Email; rows: QueueRow[]; events: OutboxEvent[] } | null {
  // test mail goes out in one transaction (routeOf gives it one route): a walk of several rows is the worker's
  if (testDomain === undefined || email.environment !== 'test' || email.status !== 'queued' || rows.length !== 1)
    return null;
  // as the worker's claim leaves them: submitting, one attempt
  const row = claimRow(rows[0], now, null);
  const claimed = claimEmail(email, now);
  const { outcomes, providerMessageId } = simulateAttempt(
    claimed,
    claimed.recipients.filter((r) => r.queueRowId === row.id),
    testDomain,
    row.attempts,
  );
  const change = applyOutcomes(claimed, row, outcomes, {
    now,
    retryDelaysMs: SIMULATED_RETRY_MS,
    otherRows: [],
    providerMessageId,
  });
  return {
    email: change.email,
    rows: keepsQueueRow(change.email, change.row) ? [change.row] : [],
    events: change.events,
  };
}
