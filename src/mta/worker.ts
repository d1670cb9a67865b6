import type { Knex } from 'knex';
import { countOutcomes } from './count-outcomes.js';
import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import { isStorageRefusal } from '../lib/storage-full.js';
import type { Clock } from '../lib/time.js';
import { lockRows } from '../store/db.js';
import { type Store } from '../store/store.js';
import type { GroupCommit } from '../store/group-commit.js';
import { Batcher } from '../store/batcher.js';
import type { Lease } from '../store/lease.js';
import type { Email, Recipient } from '../modules/emails/email.js';
import { attachmentCounts, findEmailsById, saveClaimedEmails } from '../modules/emails/emails.repo.js';
import { claimEmail, claimRow, waitingOn, type RecipientOutcome } from '../modules/emails/lifecycle.js';
import { claimDueRows, markDataStarted, nextDueAt, renewQueueLeases, type QueueRow } from '../modules/emails/queue.repo.js';
import { blocksSend, suppressionKey, type SuppressionReason } from '../modules/suppressions/suppression.js';
import { asksForUnsubscribe } from '../modules/emails/list-unsubscribe.js';
import { suppressedAmong } from '../modules/suppressions/suppressions.repo.js';
import type { WorkerRoom } from './handoff.js';
import { BulkShare } from './bulk-share.js';
import type { Attempt, AttemptResult, InstantAttempt } from './attempt.js';
import { recordOutcomes, recoverOrphans, type Completed } from './record.js';

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

/** A claimed row's recipients: those to send to, and those suppressed since the 202 (their outcome, already known). */
interface Screened {
  sendable: Recipient[];
  outcomes: Map<string, RecipientOutcome>;
}

/**
 * The queue worker: claims due rows (queued → submitting, with a lease),
 * runs an attempt for each, and records the outcome with its events in one
 * transaction. Database rows, not timers, hold what is due, so nothing is
 * lost across restarts.
 */
export class QueueWorker implements WorkerRoom {
  private stopped = true;
  private inFlight = new Set<Promise<void>>();
  /** room promised to accepts whose claimed rows are not handed over yet */
  private reserved = 0;
  private readonly bulk: BulkShare;
  private readonly waker = new Waker();
  private loop: Promise<void> | null = null;
  /** queue rows whose attempt is running here, so that their leases can be renewed */
  private readonly leased = new Set<string>();
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly recorder = new Batcher<Completed>(async (items) => {
    await this.o.writer.run((trx) => recordOutcomes(trx, items, this.recordContext(this.o.owner)));
    countOutcomes(items);
  });

  constructor(private readonly o: WorkerOptions) {
    this.bulk = new BulkShare(o.concurrency ?? 200);
  }

  private get leaseMs(): number {
    return this.o.leaseMs ?? 15 * 60_000;
  }

  private get concurrency(): number {
    return this.o.concurrency ?? 200;
  }

  private lease(now: number): Lease {
    return { owner: this.o.owner, until: now + this.leaseMs };
  }

  private recordContext(owner: string | null) {
    return { now: this.o.clock.now(), owner, retryScheduleMs: this.o.retryScheduleMs, logger: this.o.logger };
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
    const { until } = this.lease(this.o.clock.now());
    await this.o.writer
      .run((trx) => renewQueueLeases(trx, this.o.owner, [...this.leased], until))
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
    return { granted, lease: this.lease(now) };
  }

  /** Rows an accept claimed for this worker, with their emails as stored; a stopped worker leaves them to its recovery. */
  handOver(rows: Array<{ row: QueueRow; email: Email }>): void {
    this.reserved -= rows.length;
    if (this.stopped) return;
    // the accept checked the suppression list in the transaction that claimed them
    const none = new Map<string, SuppressionReason>();
    for (const { row, email } of rows) this.track(this.process(row, email, none));
  }

  release(n: number): void {
    this.reserved -= n;
    this.wake();
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
      let claimed: number | null = 0;
      const room = this.concurrency - this.inFlight.size - this.reserved;
      try {
        if (this.o.store.client === 'pg' && this.o.clock.now() - lastRecovery > 30_000) {
          lastRecovery = this.o.clock.now();
          await this.recover(false);
        }
        if (room > 0) claimed = await this.claim(Math.min(batch, room));
      } catch (e) {
        claimed = null;
        if (!isStorageRefusal(e)) this.o.logger.error({ err: e }, 'queue claim failed');
      }
      if (claimed === Math.min(batch, room) && room > 0) continue;
      // after a failed claim (a full disk: the store logs it) a second's pause, not a spin over rows due now
      await this.waker.sleep(claimed === null ? 1000 : room > 0 ? await this.untilDue() : 50);
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
      const lease = this.lease(now);
      const claimed = (await claimDueRows(trx, { now, limit, lease, bulkLimit: this.bulk.room })).map((q) => claimRow(q, now, lease));
      count = claimed.length;
      if (!claimed.length) return claimed;
      // What every attempt of the batch needs, read once, here: on SQLite the writer's connection
      // has these pages cached, while a reader's cache is dropped at every commit.
      const ids = [...new Set(claimed.map((q) => q.emailId))];
      await lockRows(trx, 'emails', ids);
      const read = await findEmailsById(trx, ids);
      suppressed = await suppressedAmong(trx, read.flatMap((e) => e.recipients.map((r) => ({ projectId: e.projectId, address: r.address }))), now);
      // An attempt starts if any row of the email has someone left to send to; recipients all
      // suppressed since the 202 (a scheduled send) start none.
      const byId = new Map(read.map((e) => [e.id, e]));
      const attempted = new Set(claimed.filter((q) => byId.has(q.emailId) && screen(byId.get(q.emailId)!, q, suppressed).sendable.length).map((q) => q.emailId));
      emails = new Map(read.map((e) => [e.id, claimEmail(e, now, attempted.has(e.id))]));
      const settled = this.o.instant ? await this.settleInstant(trx, claimed, emails, suppressed) : new Set<string>();
      const left = claimed.filter((q) => !settled.has(q.id));
      await this.markClaimed(trx, [...new Set(left.map((q) => q.emailId))].flatMap((id) => emails.get(id) ?? []), attempted, now);
      return left;
    });
    for (const q of rows) this.track(q.bulk ? this.bulk.track(this.process(q, emails.get(q.emailId), suppressed)) : this.process(q, emails.get(q.emailId), suppressed));
    return count;
  }

  /** The claimed emails left for a normal attempt are written as claimed, and learn how many attachments each has. */
  private async markClaimed(trx: Knex.Transaction, claimed: Email[], attempted: Set<string>, now: number): Promise<void> {
    await saveClaimedEmails(trx, claimed, attempted, now);
    // so that building their messages reads attachments only for the few emails that have any
    const counts = await attachmentCounts(trx, claimed.map((e) => e.id));
    // set on the claim's own copies: a spread adding the field would take V8's slow path
    for (const e of claimed) e.attachmentCount = counts.get(e.id) ?? 0;
  }

  /**
   * Claimed rows whose attempt is instant are attempted and recorded here, in
   * the claiming transaction (as submitting, then their outcome). Returns the
   * ids of the rows settled so. `emails` are as the claim leaves them.
   */
  private async settleInstant(trx: Knex.Transaction, claimed: QueueRow[], emails: Map<string, Email>, suppressed: Map<string, SuppressionReason>): Promise<Set<string>> {
    const done: Completed[] = [];
    for (const q of claimed) {
      const email = emails.get(q.emailId);
      if (!email) continue;
      const { outcomes, sendable } = screen(email, q, suppressed);
      const result = sendable.length ? this.o.instant!(email, q, sendable) : { outcomes: new Map<string, RecipientOutcome>() };
      if (!result) continue;
      for (const [id, o] of result.outcomes) outcomes.set(id, o);
      done.push({ row: q, outcomes, result });
    }
    // recordOutcomes works on a copy: the emails of rows left for a normal attempt stay as read
    if (done.length) await recordOutcomes(trx, done, this.recordContext(this.o.owner), new Map(emails));
    return new Set(done.map((c) => c.row.id));
  }

  private async untilDue(): Promise<number> {
    const idle = this.o.idleMs ?? 1000;
    // with no room for broadcast mail, due broadcast rows are no reason to wake: a finished attempt wakes the loop
    const due = await nextDueAt(this.o.store.reader, this.bulk.room > 0).catch(() => null);
    return due === null ? idle : Math.max(0, Math.min(idle, due - this.o.clock.now()));
  }

  private async process(q: QueueRow, email: Email | undefined, suppressed: Map<string, SuppressionReason>): Promise<void> {
    if (!email) return;
    this.leased.add(q.id);
    try {
      await this.attemptAndRecord(q, email, suppressed);
    } finally {
      this.leased.delete(q.id);
    }
  }

  private async attemptAndRecord(q: QueueRow, email: Email, suppressed: Map<string, SuppressionReason>): Promise<void> {
    const { sendable, outcomes } = screen(email, q, suppressed);
    let bodyMayHaveGone = false;
    try {
      let result: AttemptResult = { outcomes: new Map() };
      if (sendable.length) {
        result = await this.o.attempt(email, q, sendable, {
          beforeData: async () => {
            await this.o.writer.run((trx) => markDataStarted(trx, [q.id]));
            bodyMayHaveGone = true;
          },
        });
      }
      for (const [id, o] of result.outcomes) outcomes.set(id, o);
      await this.recorder.add({ row: q, outcomes, result });
    } catch (e) {
      // A fault of ours (a failed read, a MIME error): the row must not stay submitting until the
      // next start. Retried later if no body went out; ambiguous if one may have.
      this.o.logger.error({ err: e, row: q.id, email: q.emailId }, 'delivery attempt failed unexpectedly');
      const reply = `internal error during the attempt: ${(e as Error).message}`;
      const outcome: RecipientOutcome = bodyMayHaveGone ? { kind: 'ambiguous', stage: 'internal', reply } : { kind: 'deferred', reply: `451 4.3.0 ${reply}` };
      const failed = new Map(waitingOn(email, q).map((r) => [r.id, outcome]));
      await this.recorder.add({ row: q, outcomes: failed, result: { outcomes: failed } }).catch((err: unknown) => {
        this.o.logger.error({ err, row: q.id }, 'could not record the failed attempt; the row is recovered at the next start or when its lease ends');
      });
    }
  }

  /** Rows left submitting by a process that died (record.ts recoverOrphans). */
  async recover(all: boolean): Promise<number> {
    const n = await this.o.writer.run((trx) => recoverOrphans(trx, all, this.recordContext(null)));
    if (n) this.o.logger.warn({ count: n }, 'recovered queue rows left submitting');
    return n;
  }
}

/** The recipients of a row still waiting, minus those on the suppression list (read again: it may have grown since the 202). */
function screen(email: Email, q: QueueRow, suppressed: Map<string, SuppressionReason>): Screened {
  const outcomes = new Map<string, RecipientOutcome>();
  const asks = asksForUnsubscribe(email.headers);
  const sendable = waitingOn(email, q).filter((r) => {
    const reason = suppressed.get(suppressionKey(email.projectId, r.address));
    if (!reason || !blocksSend(reason, asks)) return true;
    outcomes.set(r.id, { kind: 'suppressed', reason });
    return false;
  });
  return { sendable, outcomes };
}
