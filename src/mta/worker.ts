import { countOutcomes } from './count-outcomes.js';
import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import { isStorageRefusal } from '../lib/storage-full.js';
import type { Clock } from '../lib/time.js';
import { type Store } from '../store/store.js';
import type { GroupCommit } from '../store/group-commit.js';
import { Batcher } from '../store/batcher.js';
import type { Lease } from '../store/lease.js';
import type { Email } from '../modules/sending/emails/email.js';
import { waitingOn, type RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import { markDataStarted, nextDueAt, renewQueueLeases, type QueueRow } from '../modules/sending/emails/queue.repo.js';
import type { SuppressionReason } from '../modules/sending/suppressions/suppression.js';
import type { WorkerRoom } from './handoff.js';
import { BulkShare } from './bulk-share.js';
import type { Attempt, AttemptResult, InstantAttempt } from './attempt.js';
import { claimBatch } from './claim-batch.js';
import { recordOutcomes, recoverOrphans, type Completed } from './record.js';
import { screen } from './screen-recipients.js';

export interface WorkerOptions {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  /** identifies this process in lease columns */
  owner: string;
  attempt: Attempt;
  instant?: InstantAttempt;
  retryDelaysMs: (email: Email) => readonly number[];
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
  private recoverDue = false;
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
    return { now: this.o.clock.now(), owner, retryDelaysMs: this.o.retryDelaysMs, logger: this.o.logger };
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

  /** A dead node's rows were released (roles/node.ts): recover them now rather than at the next round. */
  recoverSoon(): void {
    this.recoverDue = true;
    this.wake();
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
        if (this.o.store.client === 'pg' && (this.recoverDue || this.o.clock.now() - lastRecovery > 30_000)) {
          lastRecovery = this.o.clock.now();
          this.recoverDue = false;
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

  /** Claims up to `limit` due rows (claim-batch.ts); returns how many it claimed (settled at once or now in flight). */
  private async claim(limit: number): Promise<number> {
    const now = this.o.clock.now();
    const { count, rows, emails, suppressed } = await this.o.writer.run((trx) =>
      claimBatch(trx, {
        now,
        limit,
        lease: this.lease(now),
        bulkLimit: this.bulk.room,
        instant: this.o.instant,
        recordContext: () => this.recordContext(this.o.owner),
      }),
    );
    for (const q of rows)
      this.track(
        q.bulk
          ? this.bulk.track(this.process(q, emails.get(q.emailId), suppressed))
          : this.process(q, emails.get(q.emailId), suppressed),
      );
    return count;
  }

  private async untilDue(): Promise<number> {
    const idle = this.o.idleMs ?? 1000;
    // with no room for broadcast mail, due broadcast rows are no reason to wake: a finished attempt wakes the loop
    const due = await nextDueAt(this.o.store.reader, this.bulk.room > 0).catch(() => null);
    return due === null ? idle : Math.max(0, Math.min(idle, due - this.o.clock.now()));
  }

  private async process(
    q: QueueRow,
    email: Email | undefined,
    suppressed: Map<string, SuppressionReason>,
  ): Promise<void> {
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
            const held = await this.o.writer.run((trx) => markDataStarted(trx, q.id, this.o.owner, this.o.clock.now()));
            if (!held) throw new Error('this node no longer holds the row (released as dead); the body was not sent');
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
      const outcome: RecipientOutcome = bodyMayHaveGone
        ? { kind: 'ambiguous', stage: 'internal', reply }
        : { kind: 'deferred', reply: `451 4.3.0 ${reply}` };
      const failed = new Map(waitingOn(email, q).map((r) => [r.id, outcome]));
      await this.recorder.add({ row: q, outcomes: failed, result: { outcomes: failed } }).catch((err: unknown) => {
        this.o.logger.error(
          { err, row: q.id },
          'could not record the failed attempt; the row is recovered at the next start or when its lease ends',
        );
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
