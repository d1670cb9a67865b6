import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import type { Clock } from '../lib/time.js';
import { lockRows, type Store } from '../store/store.js';
import type { GroupCommit } from '../store/group-commit.js';
import { claimDue, deleteDelivery, deliveriesOfEmails, markDataStarted, nextDueAt, orphanedSubmitting, renewLeases, saveDelivery, type Delivery } from '../modules/emails/deliveries.repo.js';
import { attachmentCounts, findEmailById, findEmailsById, saveEmailState, saveRecipient, type Email, type Recipient } from '../modules/emails/emails.repo.js';
import { applyOutcomes, claimedEmail, keepsQueueRow, type Lease, type RecipientOutcome } from '../modules/emails/lifecycle.js';
import { insertEvents, type OutboxEvent } from '../modules/events/events.repo.js';
import { Batcher } from '../store/batcher.js';
import type { QueueHandoff } from '../modules/emails/accept.js';
import { addSuppression, suppressedAmong, suppressionKey, type SuppressionReason } from '../modules/suppressions/suppressions.repo.js';
import type { Knex } from 'knex';

export interface AttemptResult {
  outcomes: Map<string, RecipientOutcome>;
  providerMessageId?: string | null;
  failureReason?: string;
}

interface Completed {
  delivery: Delivery;
  outcomes: Map<string, RecipientOutcome>;
  result: AttemptResult;
}

export interface AttemptHooks {
  /** resolves once the store records that the message body is about to go out (commit included) */
  beforeData(): Promise<void>;
}

/** One attempt at one queue row: simulation for test mail, SMTP for live mail. */
export type Attempt = (email: Email, delivery: Delivery, recipients: Recipient[], hooks: AttemptHooks) => Promise<AttemptResult>;

/**
 * An attempt that needs no I/O (the simulation of test keys): its outcome is
 * known at once, so it is recorded in the transaction that claims the row —
 * one commit instead of two, and no body read. Returns null for an email it
 * does not handle (live mail), which then gets a normal attempt.
 */
export type InstantAttempt = (email: Email, delivery: Delivery, recipients: Recipient[]) => AttemptResult | null;

export interface WorkerOptions {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  /** identifies this process in lease columns */
  owner: string;
  attempt: Attempt;
  instant?: InstantAttempt;
  retryScheduleMs(email: Email): readonly number[];
  /** a row held longer than this by a process is considered abandoned (PostgreSQL) */
  leaseMs?: number;
  /** rows claimed at once */
  batch?: number;
  /** rows in flight at once */
  concurrency?: number;
  /** longest sleep between looks at the queue */
  idleMs?: number;
}

/**
 * The queue worker: claims due rows (queued → submitting, with a lease),
 * runs an attempt for each, and records the outcome with its events in one
 * transaction. Database rows, not timers, hold what is due, so nothing is
 * lost across restarts.
 */
export class QueueWorker implements QueueHandoff {
  private stopped = true;
  private inFlight = new Set<Promise<void>>();
  /** room promised to accepts whose claimed rows are not handed over yet */
  private reserved = 0;
  private readonly waker = new Waker();
  private loop: Promise<void> | null = null;
  /** queue rows whose attempt is running here, so that their leases can be renewed */
  private readonly leased = new Set<string>();
  private renewTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: WorkerOptions) {}

  private get leaseMs(): number {
    return this.o.leaseMs ?? 15 * 60_000;
  }

  async start(): Promise<void> {
    await this.recover(this.o.store.client === 'sqlite');
    this.stopped = false;
    this.loop = this.run();
    // An attempt may outlast a lease (50 recipients behind slow servers): while it runs, its lease
    // is extended, so that another process never takes over a row that is still being sent.
    this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(1000, this.leaseMs / 3));
    this.renewTimer.unref();
  }

  private async renewLeases(): Promise<void> {
    if (!this.leased.size) return;
    const now = this.o.clock.now();
    await this.o.writer
      .run((trx) => renewLeases(trx, this.o.owner, [...this.leased], now + this.leaseMs))
      .catch((e: unknown) => this.o.logger.warn({ err: e }, 'could not renew queue leases'));
  }

  /** Look at the queue now (something was just stored). */
  wake(): void {
    this.waker.wake();
  }

  reserve(n: number, now: number): { granted: number; lease: Lease } | null {
    const room = this.concurrency - this.inFlight.size - this.reserved;
    if (this.stopped || room <= 0 || n <= 0) return null;
    const granted = Math.min(n, room);
    this.reserved += granted;
    return { granted, lease: { owner: this.o.owner, until: now + this.leaseMs } };
  }

  /** Rows an accept claimed for this worker, with their emails as stored; a stopped worker leaves them to its recovery. */
  handOver(rows: Array<{ delivery: Delivery; email: Email }>): void {
    this.reserved -= rows.length;
    if (this.stopped) return;
    // the accept checked the suppression list in the transaction that claimed them
    const none = new Map<string, SuppressionReason>();
    for (const { delivery, email } of rows) this.track(this.process(delivery, email, none));
  }

  release(n: number): void {
    this.reserved -= n;
    this.wake();
  }

  private get concurrency(): number {
    return this.o.concurrency ?? 200;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.wake();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async run(): Promise<void> {
    const batch = this.o.batch ?? 100;
    let lastRecovery = this.o.clock.now();
    while (!this.stopped) {
      let claimed = 0;
      const room = this.concurrency - this.inFlight.size - this.reserved;
      try {
        if (this.o.store.client === 'pg' && this.o.clock.now() - lastRecovery > 30_000) {
          lastRecovery = this.o.clock.now();
          await this.recover(false);
        }
        if (room > 0) claimed = await this.claim(Math.min(batch, room));
      } catch (e) {
        this.o.logger.error({ err: e }, 'queue claim failed');
      }
      if (claimed === Math.min(batch, room) && room > 0) continue;
      await this.waker.sleep(room > 0 ? await this.untilDue() : 50);
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      this.wake();
    });
  }

  /** Claims up to `limit` due rows; returns how many it claimed (settled at once or now in flight). */
  private async claim(limit: number): Promise<number> {
    const now = this.o.clock.now();
    let count = 0;
    let emails = new Map<string, Email>();
    let suppressed = new Map<string, SuppressionReason>();
    const rows = await this.o.writer.run(async (trx) => {
      const claimed = await claimDue(trx, this.o.store.client, { now, limit, owner: this.o.owner, leaseMs: this.leaseMs });
      count = claimed.length;
      if (!claimed.length) return claimed;
      // What every attempt of the batch needs, read once, here: on SQLite the writer's connection
      // has these pages cached, while a reader's cache is dropped at every commit.
      const ids = [...new Set(claimed.map((r) => r.emailId))];
      await lockRows(trx, 'emails', ids);
      const read = new Map((await findEmailsById(trx, ids)).map((e) => [e.id, e]));
      suppressed = await suppressedAmong(
        trx,
        [...read.values()].flatMap((e) => e.recipients.map((r) => ({ projectId: e.projectId, address: r.address }))),
      );
      // As the claim leaves them: submitting, and one more attempt if any row of the email has someone
      // left to send to. Recipients all suppressed since the 202 (a scheduled send) start no attempt.
      const attempted = new Set<string>();
      for (const d of claimed) {
        const e = read.get(d.emailId);
        if (e && this.screen(e, d, suppressed).sendable.length) attempted.add(e.id);
      }
      emails = new Map([...read.values()].map((e) => [e.id, claimedEmail(e, now, attempted.has(e.id))]));
      const settled = this.o.instant ? await this.settleInstant(trx, claimed, emails, suppressed) : new Set<string>();
      const left = claimed.filter((r) => !settled.has(r.id));
      const leftIds = [...new Set(left.map((r) => r.emailId))];
      if (leftIds.length) {
        const counted = leftIds.filter((id) => attempted.has(id));
        const uncounted = leftIds.filter((id) => !attempted.has(id));
        if (counted.length) await trx('emails').whereIn('id', counted).update({ status: 'submitting', attempts: trx.raw('attempts + 1'), updated_at: now });
        if (uncounted.length) await trx('emails').whereIn('id', uncounted).update({ status: 'submitting', updated_at: now });
        // so that building their messages reads attachments only for the few emails that have any
        for (const [id, n] of await attachmentCounts(trx, leftIds)) {
          const e = emails.get(id);
          if (e) emails.set(id, { ...e, attachmentCount: n });
        }
      }
      return left;
    });
    for (const d of rows) this.track(this.process(d, emails.get(d.emailId), suppressed));
    return count;
  }

  /**
   * Claimed rows whose attempt is instant are attempted and recorded here, in
   * the claiming transaction (as submitting, then their outcome). Returns the
   * ids of the rows settled so. `emails` are as the claim leaves them.
   */
  private async settleInstant(trx: Knex.Transaction, claimed: Delivery[], emails: Map<string, Email>, suppressed: Map<string, SuppressionReason>): Promise<Set<string>> {
    const instant = this.o.instant!;
    const done: Completed[] = [];
    for (const d of claimed) {
      const email = emails.get(d.emailId);
      if (!email) continue;
      const { outcomes, sendable } = this.screen(email, d, suppressed);
      const result = sendable.length ? instant(email, d, sendable) : { outcomes: new Map<string, RecipientOutcome>() };
      if (!result) continue;
      for (const [id, o] of result.outcomes) outcomes.set(id, o);
      done.push({ delivery: d, outcomes, result });
    }
    // recordAll works on a copy: the emails of rows left for a normal attempt stay as read
    if (done.length) await this.recordAll(trx, done, true, new Map(emails));
    return new Set(done.map((c) => c.delivery.id));
  }

  /** The recipients of a row still waiting, minus those on the suppression list (read again: it may have grown since the 202). */
  private screen(email: Email, d: Delivery, suppressed: Map<string, SuppressionReason>): { pending: Recipient[]; sendable: Recipient[]; outcomes: Map<string, RecipientOutcome> } {
    const pending = email.recipients.filter((r) => r.deliveryId === d.id && (r.status === 'queued' || r.status === 'deferred'));
    const outcomes = new Map<string, RecipientOutcome>();
    const sendable = pending.filter((r) => {
      const reason = suppressed.get(suppressionKey(email.projectId, r.address));
      if (!reason) return true;
      outcomes.set(r.id, { kind: 'suppressed', reason });
      return false;
    });
    return { pending, sendable, outcomes };
  }

  private async untilDue(): Promise<number> {
    const idle = this.o.idleMs ?? 1000;
    const due = await nextDueAt(this.o.store.reader).catch(() => null);
    return due === null ? idle : Math.max(0, Math.min(idle, due - this.o.clock.now()));
  }


  private async process(d: Delivery, email: Email | undefined, suppressed: Map<string, SuppressionReason>): Promise<void> {
    if (!email) return;
    this.leased.add(d.id);
    try {
      await this.attemptAndRecord(d, email, suppressed);
    } finally {
      this.leased.delete(d.id);
    }
  }

  private async attemptAndRecord(d: Delivery, email: Email, suppressed: Map<string, SuppressionReason>): Promise<void> {
    const { pending, sendable, outcomes } = this.screen(email, d, suppressed);
    let bodyMayHaveGone = false;
    try {
      let result: AttemptResult = { outcomes: new Map() };
      if (sendable.length) {
        result = await this.o.attempt(email, d, sendable, {
          beforeData: async () => {
            await this.o.writer.run((trx) => markDataStarted(trx, [d.id]));
            bodyMayHaveGone = true;
          },
        });
      }
      for (const [id, o] of result.outcomes) outcomes.set(id, o);
      await this.recorder.add({ delivery: d, outcomes, result });
    } catch (e) {
      // A fault of ours (a failed read, a MIME error): the row must not stay submitting until the
      // next start. Retried later if no body went out; ambiguous if one may have.
      this.o.logger.error({ err: e, delivery: d.id, email: d.emailId }, 'delivery attempt failed unexpectedly');
      const reply = `internal error during the attempt: ${(e as Error).message}`;
      const outcome: RecipientOutcome = bodyMayHaveGone ? { kind: 'ambiguous', reply } : { kind: 'deferred', reply: `451 4.3.0 ${reply}` };
      const outcomes = new Map(pending.map((r) => [r.id, outcome]));
      await this.recorder.add({ delivery: d, outcomes, result: { outcomes } }).catch((err: unknown) => {
        this.o.logger.error({ err, delivery: d.id }, 'could not record the failed attempt; the row is recovered at the next start or when its lease ends');
      });
    }
  }

  private readonly recorder = new Batcher<Completed>((items) => this.o.writer.run((trx) => this.recordAll(trx, items, true)));

  /**
   * Apply attempts' outcomes, reading the emails again inside the transaction
   * that writes them. Several queue rows of one email may finish together:
   * each sees the state the previous one left.
   */
  private async recordAll(trx: Knex.Transaction, items: Completed[], leased: boolean, read?: Map<string, Email>): Promise<void> {
    const now = this.o.clock.now();
    const ids = [...new Set(items.map((i) => i.delivery.emailId))];
    // Other processes may be recording other queue rows of the same emails (PostgreSQL).
    await lockRows(trx, 'emails', ids);
    // `read`: the emails as this transaction already read them (the instant path)
    const emails = read ?? new Map((await findEmailsById(trx, ids, false)).map((e) => [e.id, e]));
    const rows = new Map((await deliveriesOfEmails(trx, ids)).map((d) => [d.id, d]));
    const events: OutboxEvent[] = [];
    for (const { delivery: d, outcomes, result } of items) {
      const email = emails.get(d.emailId);
      if (!email) continue;
      const stored = rows.get(d.id);
      // Only the holder of the lease records: a row taken over after its lease ran out belongs to the taker.
      if (leased && (stored?.state !== 'submitting' || stored.leaseOwner !== this.o.owner)) {
        this.o.logger.warn({ delivery: d.id, email: email.id }, 'an attempt finished after its lease was taken over; its outcome is not recorded');
        continue;
      }
      const others = [...rows.values()].filter((x) => x.emailId === email.id && x.id !== d.id);
      const change = applyOutcomes(email, d, outcomes, {
        now,
        retryScheduleMs: this.o.retryScheduleMs(email),
        otherDeliveries: others,
        providerMessageId: result.providerMessageId ?? null,
        ...(result.failureReason ? { failureReason: result.failureReason } : {}),
      });
      emails.set(email.id, change.email);
      rows.set(d.id, change.delivery);
      await saveEmailState(trx, change.email);
      for (const r of change.recipients) if (outcomes.has(r.id)) await saveRecipient(trx, r);
      if (keepsQueueRow(change.email, change.delivery)) await saveDelivery(trx, change.delivery);
      else await deleteDelivery(trx, d.id);
      events.push(...change.events);
      for (const s of change.suppress) await addSuppression(trx, { projectId: email.projectId, address: s.address, reason: s.reason, emailId: email.id, createdAt: now });
    }
    await insertEvents(trx, events);
  }

  /**
   * Rows left `submitting` by a process that died. If the store shows the
   * message body never started, the row simply goes back to the queue; if
   * it may have, its recipients become `ambiguous` and are never sent again
   * without an operator (`posthorn queue retry`). SQLite: one process owns
   * the queue, so at start every such row is orphaned; PostgreSQL: rows whose
   * lease ran out.
   */
  async recover(all: boolean): Promise<number> {
    const now = this.o.clock.now();
    return this.o.writer.run(async (trx) => {
      const orphans = await orphanedSubmitting(trx, this.o.store.client, now, all);
      for (const d of orphans) {
        if (!d.dataStarted) {
          await saveDelivery(trx, { ...d, state: 'queued', leaseOwner: null, leaseUntil: null, nextAttemptAt: now, updatedAt: now });
          await trx('emails').where({ id: d.emailId, status: 'submitting' }).update({ status: 'queued', updated_at: now });
          continue;
        }
        const email = await findEmailById(trx, d.emailId);
        if (!email) continue;
        const outcomes = new Map<string, RecipientOutcome>(
          email.recipients
            .filter((r) => r.deliveryId === d.id && (r.status === 'queued' || r.status === 'deferred'))
            .map((r) => [r.id, { kind: 'ambiguous', reply: 'the appliance stopped while the message was being transmitted; whether the server accepted it is unknown' }]),
        );
        await this.recordAll(trx, [{ delivery: d, outcomes, result: { outcomes } }], false);
      }
      if (orphans.length) this.o.logger.warn({ count: orphans.length }, 'recovered deliveries left submitting');
      return orphans.length;
    });
  }
}
