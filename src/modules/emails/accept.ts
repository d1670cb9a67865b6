import type { Knex } from 'knex';
import { apiError, ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Logger } from '../../log/logger.js';
import type { Committed, Store } from '../../store/store.js';
import type { GroupCommit } from '../../store/group-commit.js';
import { emailEvent } from '../events/emit.js';
import { insertEvents, type OutboxEvent } from '../events/events.repo.js';
import { findProjectsById, type Project } from '../projects/projects.repo.js';
import { addUsage, periodsOf, usageCounts } from '../projects/usage.repo.js';
import { suppressedAmong, suppressionKey } from '../suppressions/suppressions.repo.js';
import { insertDeliveries, type Delivery } from './deliveries.repo.js';
import { insertEmails, type Email, type Environment, type StoredAttachment } from './emails.repo.js';
import { presentEmail } from './emails.presenter.js';
import { finishIdempotent } from './idempotency.js';
import type { PreparedEmail } from './prepare.js';
import { applyOutcomes, claimedDelivery, claimedEmail, keepsQueueRow, type Lease } from './lifecycle.js';
import { simulateAttempt, SIMULATED_RETRY_MS } from './simulate.js';

export interface AcceptRequest {
  project: Project;
  environment: Environment;
  prepared: PreparedEmail;
  attachments: StoredAttachment[];
  requestId: string;
  idempotencyKey: string | null;
}

/** A committed email whose commit is not known to be on disk: storing it again could queue it twice. */
export const notDurable = () => apiError('internal_error', 'the email could not be stored durably; retry it');

/** Takes an email into the queue; resolves once it is stored durably (AcceptQueue, or its relay to another thread). */
export interface Acceptor {
  submit(req: AcceptRequest): Promise<Email>;
}

/**
 * The queue worker of this thread, when it runs here. Live mail due now is
 * claimed for it in the transaction that stores it (submitting, with the
 * worker's lease), and handed over in memory once that commit is durable:
 * no second transaction claims it and reads it back. A row whose commit
 * never became durable stays submitting with no data started, which the
 * worker's recovery puts back in the queue (at the next start on SQLite,
 * when the lease ends on PostgreSQL).
 */
export interface QueueHandoff {
  /** room for up to `n` more rows now: how many, and the lease to write on them; null when there is none */
  reserve(n: number, now: number): { granted: number; lease: Lease } | null;
  /** the commit that claimed these rows is durable: their attempts start */
  handOver(rows: Array<{ delivery: Delivery; email: Email }>): void;
  /** room reserved and not used (the batch claimed less, failed, or was not made durable) */
  release(n: number): void;
}

/** A batch's answer for each request, whether it left work in the queue, and the rows it claimed for the worker. */
interface Stored {
  outcomes: Array<Email | ApiError>;
  queued: boolean;
  claimed: Array<{ delivery: Delivery; email: Email }>;
}

/** Room a batch reserved with the worker: given back unless its rows are handed over. */
interface Reservation {
  granted: number;
}

interface Pending extends AcceptRequest {
  resolve(e: Committed<Email>): void;
  reject(err: unknown): void;
}

export interface AcceptOptions {
  /** Message-ID domain (outbound.hostname) */
  hostname: string;
  /** which queue row a recipient goes to: its domain in direct mode, '' for one transaction */
  routeOf(environment: Environment, address: string): string;
  /** largest group of requests committed together */
  maxBatch?: number;
  /** told after every commit that stored emails, so that the queue looks at once */
  onStored?: () => void;
  /** the queue worker of this thread, if any (looked up per batch: it starts after the accept queue) */
  handoff?: () => QueueHandoff | null;
  /** the thread's group commit: accepted emails share commits with the queue's own writes */
  writer: GroupCommit;
  /**
   * The test domain of CONTRACT §4. When set, test mail due now is simulated
   * in the transaction that stores it (see settleSimulated); otherwise the
   * queue worker simulates it as it claims it.
   */
  testDomain?: string;
}

/**
 * Group commit of accepted emails. Requests wait here until the current
 * transaction commits; then everything that arrived meanwhile is checked and
 * stored in the next single transaction (a few multi-row statements, one
 * fsync). No request is answered before the commit that holds it, so a 202
 * always survives a crash. The checks that must see the stored state — the
 * suppression list, the From domain, the sending limits — run inside that
 * transaction, in arrival order.
 */
export class AcceptQueue implements Acceptor {
  private waiting: Pending[] = [];
  private running = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly opts: AcceptOptions,
  ) {}

  submit(req: AcceptRequest): Promise<Email> {
    return this.submitCommitted(req).then(({ value, durable }) =>
      durable.then(
        () => value,
        () => Promise.reject(notDurable()),
      ),
    );
  }

  /**
   * Resolves at the commit that stores the email, before it is on disk: for
   * the background thread, which sends it to the API thread at once with its
   * commit number (accept-relay.ts). Nobody may be told it is accepted
   * before `durable` resolves.
   */
  submitCommitted(req: AcceptRequest): Promise<Committed<Email>> {
    return new Promise<Committed<Email>>((resolve, reject) => {
      this.waiting.push({ ...req, resolve, reject });
      if (!this.running) this.drain();
    });
  }

  private drain(): void {
    this.running = true;
    // Let the requests of this turn of the event loop join the batch.
    setImmediate(() => this.flush());
  }

  /**
   * Each batch is one job of the thread's group commit: while a commit is under way, what comes
   * next waits for the following one, and a batch fails alone (its own savepoint).
   */
  private flush(): void {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, this.opts.maxBatch ?? 1000);
      const room: Reservation = { granted: 0 };
      this.opts.writer.runCommitted((trx) => this.storeBatch(trx, batch, room)).then(
        (committed) => this.settle(batch, committed, room),
        (e: unknown) => {
          this.giveBack(room);
          void this.oneByOne(batch, e);
        },
      );
    }
    this.running = false;
  }

  /** One request must not fail the others that shared its transaction: each goes again alone. */
  private async oneByOne(batch: Pending[], e: unknown): Promise<void> {
    if (batch.length === 1) {
      this.logger.error({ err: e }, 'could not store an email');
      batch[0]!.reject(apiError('internal_error', 'the email could not be stored; nothing was queued'));
      return;
    }
    this.logger.warn({ err: e, size: batch.length }, 'a batch of emails could not be stored; storing them one by one');
    for (const one of batch) {
      const room: Reservation = { granted: 0 };
      try {
        this.settle([one], await this.store.commit((trx) => this.storeBatch(trx, [one], room)), room);
      } catch (err) {
        this.giveBack(room);
        this.logger.error({ err }, 'could not store an email');
        one.reject(apiError('internal_error', 'the email could not be stored; nothing was queued'));
      }
    }
  }

  private giveBack(room: Reservation): void {
    if (room.granted) this.opts.handoff?.()?.release(room.granted);
    room.granted = 0;
  }

  private settle(batch: Pending[], { value: { outcomes, queued, claimed }, durable, seq }: Committed<Stored>, room: Reservation): void {
    durable.catch((e: unknown) => this.logger.error({ err: e, size: batch.length }, 'a committed batch of emails could not be made durable'));
    if (room.granted) {
      const handoff = this.opts.handoff?.();
      const unused = room.granted - claimed.length;
      room.granted = 0;
      // nothing is sent of a commit that may be lost
      durable.then(
        () => {
          if (unused) handoff?.release(unused);
          handoff?.handOver(claimed);
        },
        () => handoff?.release(unused + claimed.length),
      );
    }
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o instanceof ApiError) p.reject(o);
      else p.resolve({ value: o, durable, seq });
    });
    // the queue hears of the emails once they are on disk: nothing is sent of a commit that may be lost
    if (queued) durable.then(() => this.opts.onStored?.(), () => undefined);
  }

  private async storeBatch(trx: Knex.Transaction, batch: Pending[], room: Reservation): Promise<Stored> {
    // a transaction run again (a retry of the store) reserves afresh
    this.giveBack(room);
    const now = this.clock.now();
    const suppressed = await suppressedAmong(
      trx,
      batch.flatMap((p) => p.prepared.recipients.map((r) => ({ projectId: p.project.id, address: r.address }))),
    );
    const verified = await verifiedDomains(trx, batch.filter((p) => p.environment === 'live'));
    const liveProjects = [...new Set(batch.filter((p) => p.environment === 'live').map((p) => p.project.id))];
    // the limits as stored now: a request's copy of its project may be a moment old (key cache)
    const current = await findProjectsById(trx, liveProjects);
    const limits = new LimitBook(await usageCounts(trx, liveProjects, Object.values(periodsOf(now))), now);

    const emails: Email[] = [];
    const deliveries: Delivery[] = [];
    const events: OutboxEvent[] = [];
    const attachments = new Map<string, StoredAttachment[]>();
    const outcomes = batch.map((p): Email | ApiError => {
      const { prepared, project } = p;
      if (p.environment === 'live' && !verified.has(`${project.id}|${prepared.from.domain}`)) {
        return apiError('domain_not_verified', `the From domain ${prepared.from.domain} is not a verified domain of this project`);
      }
      const isSuppressed = (a: string) => suppressed.has(suppressionKey(project.id, a));
      const live = prepared.recipients.filter((r) => !isSuppressed(r.address));
      if (!live.length) return apiError('recipient_suppressed', 'every recipient is on the suppression list; nothing was queued');
      if (p.environment === 'live') {
        const refusal = limits.take(current.get(project.id) ?? project, live.length);
        if (refusal) return refusal;
      }
      const email = this.buildEmail(p, now, isSuppressed, deliveries);
      if (p.attachments.length) attachments.set(email.id, p.attachments);
      for (const r of email.recipients) {
        if (r.status === 'suppressed') events.push(emailEvent(email, 'email.suppressed', now, r.address, { reason: suppressed.get(suppressionKey(project.id, r.address)) ?? 'manual' }));
      }
      if (email.status === 'scheduled') events.push(emailEvent(email, 'email.scheduled', now, null, { scheduled_at: new Date(email.scheduledAt!).toISOString() }));
      // after the accept's own events, as if the worker had claimed it a moment later
      const simulated = this.settleSimulated(email, deliveries, now);
      emails.push(simulated?.email ?? email);
      if (simulated) events.push(...simulated.events);
      // the 202 shows the email as accepted (queued, attempts 0), whatever its simulation did next
      return email;
    });

    const claimed = this.claimForWorker(emails, deliveries, now, room);
    await insertEmails(trx, emails, attachments);
    await insertDeliveries(trx, deliveries);
    await insertEvents(trx, events);
    for (const [projectId, period, n] of limits.increments()) await addUsage(trx, projectId, period, n);
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      const o = outcomes[i]!;
      if (p.idempotencyKey && !(o instanceof ApiError)) await finishIdempotent(trx, p.project.id, p.idempotencyKey, 202, presentEmail(o));
    }
    return { outcomes, queued: deliveries.some((d) => d.state === 'queued'), claimed };
  }

  /**
   * Live mail due now, claimed for this thread's worker as its claim would
   * (submitting, one attempt, the worker's lease), as far as the worker has
   * room: whole emails, in arrival order. Rewrites `emails` and `deliveries`
   * in place to the claimed state, which is what gets stored.
   */
  private claimForWorker(emails: Email[], deliveries: Delivery[], now: number, room: Reservation): Array<{ delivery: Delivery; email: Email }> {
    const handoff = this.opts.handoff?.();
    if (!handoff) return [];
    // the queue rows of live mail due now, by email (the stored state of a scheduled email is `scheduled`)
    const live = new Set(emails.filter((e) => e.environment === 'live' && e.status === 'queued').map((e) => e.id));
    const due = new Map<string, number[]>();
    let wanted = 0;
    deliveries.forEach((d, i) => {
      if (!live.has(d.emailId) || d.state !== 'queued' || d.nextAttemptAt > now) return;
      const rows = due.get(d.emailId) ?? [];
      rows.push(i);
      due.set(d.emailId, rows);
      wanted++;
    });
    const granted = wanted ? handoff.reserve(wanted, now) : null;
    if (!granted) return [];
    room.granted = granted.granted;
    const claimed: Array<{ delivery: Delivery; email: Email }> = [];
    let left = granted.granted;
    emails.forEach((email, at) => {
      const rows = due.get(email.id);
      if (!rows || rows.length > left) return;
      left -= rows.length;
      const taken = claimedEmail(email, now);
      emails[at] = taken;
      for (const i of rows) {
        const delivery = claimedDelivery(deliveries[i]!, now, granted.lease);
        deliveries[i] = delivery;
        claimed.push({ delivery, email: taken });
      }
    });
    return claimed;
  }

  /**
   * Test mail due now never waits for the queue: its first simulated attempt
   * (claimed, then its outcome) is applied here, so the email is stored in
   * the state the worker would have left it in a moment later, with the same
   * events, and no second transaction rewrites it. The 202 still shows it
   * queued: that is what was accepted. A simulated delay stays in the queue
   * for its retry; scheduled test mail waits like any other.
   * Replaces the email's queue row in `deliveries` with its new state, or
   * drops it when the walk is over and nothing could put it back.
   */
  private settleSimulated(email: Email, deliveries: Delivery[], now: number): { email: Email; events: OutboxEvent[] } | null {
    const testDomain = this.opts.testDomain;
    if (testDomain === undefined || email.environment !== 'test' || email.status !== 'queued') return null;
    const at = deliveries.findIndex((d) => d.emailId === email.id);
    if (at < 0) return null;
    // as the worker's claim leaves them: submitting, one attempt
    const delivery = claimedDelivery(deliveries[at]!, now, null);
    const claimed = claimedEmail(email, now);
    const { outcomes, providerMessageId } = simulateAttempt(claimed, claimed.recipients.filter((r) => r.deliveryId === delivery.id), testDomain, delivery.attempts);
    const change = applyOutcomes(claimed, delivery, outcomes, { now, retryScheduleMs: SIMULATED_RETRY_MS, otherDeliveries: [], providerMessageId });
    if (keepsQueueRow(change.email, change.delivery)) deliveries[at] = change.delivery;
    else deliveries.splice(at, 1);
    return { email: change.email, events: change.events };
  }

  private buildEmail(p: Pending, now: number, isSuppressed: (a: string) => boolean, deliveries: Delivery[]): Email {
    const id = newId('email', now);
    const { prepared } = p;
    const routes = new Map<string, string>();
    const dueAt = prepared.scheduledAt ?? now;
    const recipients = prepared.recipients.map((r) => {
      const skip = isSuppressed(r.address);
      let deliveryId: string | null = null;
      if (!skip) {
        const route = this.opts.routeOf(p.environment, r.address);
        deliveryId = routes.get(route) ?? newId('delivery', now);
        if (!routes.has(route)) {
          routes.set(route, deliveryId);
          deliveries.push({ id: deliveryId, emailId: id, projectId: p.project.id, route, state: 'queued', attempts: 0, nextAttemptAt: dueAt, leaseOwner: null, leaseUntil: null, dataStarted: false, createdAt: now, updatedAt: now });
        }
      }
      return { id: newId('recipient', now), address: r.address, kind: r.kind, status: skip ? ('suppressed' as const) : ('queued' as const), details: null, deliveryId, delayNotified: false, updatedAt: now };
    });
    return {
      id,
      projectId: p.project.id,
      environment: p.environment,
      status: prepared.scheduledAt ? 'scheduled' : 'queued',
      statusReason: null,
      from: prepared.from.formatted,
      fromDomain: prepared.from.domain,
      to: prepared.to,
      cc: prepared.cc,
      bcc: prepared.bcc,
      replyTo: prepared.replyTo,
      subject: prepared.subject,
      html: prepared.html,
      text: prepared.text,
      templateId: null,
      templateVersion: null,
      tags: prepared.tags,
      headers: prepared.headers,
      requestId: p.requestId,
      scheduledAt: prepared.scheduledAt,
      attempts: 0,
      providerMessageId: null,
      messageId: `<${id.slice(4)}@${this.opts.hostname}>`,
      acceptedAt: null,
      createdAt: now,
      updatedAt: now,
      recipients,
      attachmentCount: p.attachments.length,
    };
  }
}

/** "project|domain" for each From domain that is verified in the project sending from it. */
async function verifiedDomains(trx: Knex.Transaction, live: Pending[]): Promise<Set<string>> {
  const names = [...new Set(live.map((p) => p.prepared.from.domain))];
  if (!names.length) return new Set();
  const rows = (await trx('domains').select('project_id', 'name').whereIn('name', names).andWhere('status', 'verified')) as Array<{ project_id: string; name: string }>;
  return new Set(rows.map((r) => `${r.project_id}|${r.name}`));
}

/** The daily and monthly limits of interface §7, counted in live recipients per UTC day and month. */
class LimitBook {
  private readonly added = new Map<string, number>();
  private readonly periods: { day: string; month: string };

  constructor(
    private readonly used: Map<string, number>,
    now: number,
  ) {
    this.periods = periodsOf(now);
  }

  take(project: Project, n: number): ApiError | null {
    const count = (period: string) => (this.used.get(`${project.id}|${period}`) ?? 0) + (this.added.get(`${project.id}|${period}`) ?? 0);
    const { daily, monthly } = project.limits;
    if (daily > 0 && count(this.periods.day) + n > daily) return apiError('daily_limit_exceeded', `this project may send to ${daily} live recipients a day; today's allowance is used up`);
    if (monthly > 0 && count(this.periods.month) + n > monthly) return apiError('quota_exhausted', `this project may send to ${monthly} live recipients a month; this month's allowance is used up`);
    for (const period of [this.periods.day, this.periods.month]) this.added.set(`${project.id}|${period}`, (this.added.get(`${project.id}|${period}`) ?? 0) + n);
    return null;
  }

  increments(): Array<[string, string, number]> {
    return [...this.added].map(([k, n]) => {
      const [projectId, period] = k.split('|') as [string, string];
      return [projectId, period, n];
    });
  }
}
