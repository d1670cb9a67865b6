import type { Logger } from '../log/logger.js';
import type { Clock } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { GroupCommit } from '../store/group-commit.js';
import { claimDue, deliveriesOfEmail, markDataStarted, nextDueAt, orphanedSubmitting, saveDelivery, type Delivery } from '../modules/emails/deliveries.repo.js';
import { findEmailById, saveEmailState, saveRecipient, type Email, type Recipient } from '../modules/emails/emails.repo.js';
import { applyOutcomes, type RecipientOutcome } from '../modules/emails/lifecycle.js';
import { insertEvents } from '../modules/events/events.repo.js';
import { addSuppression, suppressedAmong, suppressionKey } from '../modules/suppressions/suppressions.repo.js';
import type { Knex } from 'knex';

export interface AttemptResult {
  outcomes: Map<string, RecipientOutcome>;
  providerMessageId?: string | null;
  failureReason?: string;
}

export interface AttemptHooks {
  /** resolves once the store records that the message body is about to go out (commit included) */
  beforeData(): Promise<void>;
}

/** One attempt at one queue row: simulation for test mail, SMTP for live mail. */
export type Attempt = (email: Email, delivery: Delivery, recipients: Recipient[], hooks: AttemptHooks) => Promise<AttemptResult>;

export interface WorkerOptions {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  /** identifies this process in lease columns */
  owner: string;
  attempt: Attempt;
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
export class QueueWorker {
  private stopped = true;
  private inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly o: WorkerOptions) {}

  async start(): Promise<void> {
    await this.recover(this.o.store.client === 'sqlite');
    this.stopped = false;
    this.loop = this.run();
  }

  /** Look at the queue now (something was just stored). */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async run(): Promise<void> {
    const batch = this.o.batch ?? 100;
    const concurrency = this.o.concurrency ?? 200;
    let lastRecovery = this.o.clock.now();
    while (!this.stopped) {
      let claimed: Delivery[] = [];
      const room = concurrency - this.inFlight.size;
      try {
        if (this.o.store.client === 'pg' && this.o.clock.now() - lastRecovery > 30_000) {
          lastRecovery = this.o.clock.now();
          await this.recover(false);
        }
        if (room > 0) claimed = await this.claim(Math.min(batch, room));
      } catch (e) {
        this.o.logger.error({ err: e }, 'queue claim failed');
      }
      for (const d of claimed) this.track(this.process(d));
      if (claimed.length === Math.min(batch, room) && room > 0) continue;
      await this.sleep(room > 0 ? await this.untilDue() : 50);
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      this.wake();
    });
  }

  private async claim(limit: number): Promise<Delivery[]> {
    const now = this.o.clock.now();
    return this.o.writer.run(async (trx) => {
      const rows = await claimDue(trx, this.o.store.client, { now, limit, owner: this.o.owner, leaseMs: this.o.leaseMs ?? 15 * 60_000 });
      const emailIds = [...new Set(rows.map((r) => r.emailId))];
      if (emailIds.length) await trx('emails').whereIn('id', emailIds).update({ status: 'submitting', attempts: trx.raw('attempts + 1'), updated_at: now });
      return rows;
    });
  }

  private async untilDue(): Promise<number> {
    const idle = this.o.idleMs ?? 1000;
    const due = await nextDueAt(this.o.store.reader).catch(() => null);
    return due === null ? idle : Math.max(0, Math.min(idle, due - this.o.clock.now()));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  private async process(d: Delivery): Promise<void> {
    try {
      const email = await findEmailById(this.o.store.reader, d.emailId);
      if (!email) return;
      const pending = email.recipients.filter((r) => r.deliveryId === d.id && (r.status === 'queued' || r.status === 'deferred'));
      const outcomes = new Map<string, RecipientOutcome>();
      // The suppression list is read again when the email leaves: it may have grown since the 202.
      const suppressed = await suppressedAmong(this.o.store.reader, pending.map((r) => ({ projectId: email.projectId, address: r.address })));
      const sendable = pending.filter((r) => {
        if (!suppressed.has(suppressionKey(email.projectId, r.address))) return true;
        outcomes.set(r.id, { kind: 'suppressed' });
        return false;
      });
      let result: AttemptResult = { outcomes: new Map() };
      if (sendable.length) {
        result = await this.o.attempt(email, d, sendable, { beforeData: () => this.o.writer.run((trx) => markDataStarted(trx, [d.id])) });
      }
      for (const [id, o] of result.outcomes) outcomes.set(id, o);
      await this.o.writer.run((trx) => this.record(trx, d, outcomes, result));
    } catch (e) {
      this.o.logger.error({ err: e, delivery: d.id, email: d.emailId }, 'delivery attempt failed unexpectedly; it stays submitting until recovered');
    }
  }

  /** Apply an attempt's outcomes, reading the email again inside the transaction that writes them. */
  private async record(trx: Knex.Transaction, d: Delivery, outcomes: Map<string, RecipientOutcome>, result: Pick<AttemptResult, 'providerMessageId' | 'failureReason'>): Promise<void> {
    const email = await findEmailById(trx, d.emailId);
    if (!email) return;
    const others = (await deliveriesOfEmail(trx, email.id)).filter((x) => x.id !== d.id);
    const change = applyOutcomes(email, d, outcomes, {
      now: this.o.clock.now(),
      retryScheduleMs: this.o.retryScheduleMs(email),
      otherDeliveries: others,
      providerMessageId: result.providerMessageId ?? null,
      ...(result.failureReason ? { failureReason: result.failureReason } : {}),
    });
    await saveEmailState(trx, change.email);
    for (const r of change.recipients) if (outcomes.has(r.id)) await saveRecipient(trx, r);
    await saveDelivery(trx, change.delivery);
    await insertEvents(trx, change.events);
    for (const s of change.suppress) await addSuppression(trx, { projectId: email.projectId, address: s.address, reason: s.reason, emailId: email.id, createdAt: this.o.clock.now() });
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
        await this.record(trx, d, outcomes, {});
      }
      if (orphans.length) this.o.logger.warn({ count: orphans.length }, 'recovered deliveries left submitting');
      return orphans.length;
    });
  }
}
