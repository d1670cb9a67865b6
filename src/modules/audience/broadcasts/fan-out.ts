import type { Knex } from 'knex';
import { ApiError, type ErrorCode } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import { lockRows } from '../../../store/db.js';
import type { Committed, Store } from '../../../store/store.js';
import type { AcceptRequest, Accepted } from '../../sending/emails/accept-rules.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import type { RenderedContent } from '../../sending/templates/render-version.js';
import type { TemplateVersion } from '../../sending/templates/template.js';
import { afterBatch, beginScheduled, orphan, type BatchTally, type Broadcast } from './broadcast.js';
import { compileInline } from './broadcast-content.js';
import * as repo from './broadcasts.repo.js';
import { Orphaned, Paused, prepareBatch } from './fan-out-batch.js';

/** The accept of this thread (AcceptQueue.storeAlong): a batch's emails and its progress in one commit. */
export interface FanOutAcceptor {
  storeAlong<T>(
    work: (
      trx: Knex.Transaction,
      store: (requests: AcceptRequest[]) => Promise<Array<Accepted | ApiError>>,
    ) => Promise<T>,
    projects?: string[],
  ): Promise<Committed<T>>;
}

/** A template_id broadcast's content for one recipient, and the version it rendered. */
export type RenderTemplate = (
  projectId: string,
  templateId: string,
  version: number | null,
  variables: Record<string, unknown>,
  to: string,
) => Promise<{ version: number; rendered: RenderedContent }>;

export interface FanOutDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  accept: FanOutAcceptor;
  /** a template_id broadcast's content for one contact, and the version it rendered (templates.service.ts renderForSend) */
  renderTemplate: RenderTemplate;
  /** the installation's tracking key, which signs preference links */
  key(): Promise<Buffer>;
  /** http.public_url; without it the preference link is empty */
  publicUrl: string | null;
  /** broadcasts.max_per_second: live broadcast emails accepted per second, for the whole process */
  maxPerSecond: number;
}

/** Contacts read per batch: one transaction stores their emails and the cursor after them. */
export const FAN_OUT_BATCH = 500;
/** How long a paused broadcast waits before it is tried again. */
export const PAUSE_MS = 30_000;

/** Refusals of the accept that are about the broadcast, not the contact: every contact after would get the same. */
const PAUSING: readonly ErrorCode[] = [
  'domain_not_verified',
  'daily_limit_exceeded',
  'quota_exhausted',
  'account_not_approved',
  'account_suspended',
];

/** The batch was overtaken (cancelled, or another process moved the cursor): nothing of it is stored. */
class Overtaken extends Error {}

/**
 * The fan-out of broadcasts (docs/broadcasts.md): each step reads the next
 * contacts after the broadcast's cursor, in id order, makes each one's email
 * (fan-out-batch.ts), and stores the emails through the accept's rules
 * together with the new cursor and counts, in one commit, under the
 * broadcast's row lock and only if the cursor is still where the batch
 * began. A crash before that commit stores none of the batch and the next
 * step does it again; after it, the next step goes on after it: no contact
 * is sent to twice or skipped. Live mail is paced by a token bucket
 * (broadcasts.max_per_second) shared by the broadcasts sending at once.
 */
export class BroadcastFanOut {
  private tokens: number;
  private filledAt: number;
  private lastDurable: Promise<void> = Promise.resolve();
  /** broadcasts paused (or failing), and when to try them again */
  private readonly retryAt = new Map<string, number>();
  /** inline content compiled once per broadcast: it cannot change once sent */
  private readonly compiled = new Map<string, TemplateVersion | null>();

  constructor(private readonly deps: FanOutDeps) {
    this.tokens = this.capacity();
    this.filledAt = deps.clock.now();
  }

  /** a second's worth: a paced broadcast may start with a burst that large */
  private capacity(): number {
    return Math.max(1, this.deps.maxPerSecond);
  }

  /** The batch a paced step waits for: a quarter of a second's worth, so that a step is not one contact. */
  private threshold(): number {
    return Math.max(1, Math.min(this.capacity(), this.deps.maxPerSecond / 4));
  }

  async due(): Promise<Broadcast[]> {
    const now = this.deps.clock.now();
    return (await repo.broadcastsToFanOut(this.deps.store.reader, now)).filter(
      (b) => (this.retryAt.get(b.id) ?? 0) <= now,
    );
  }

  nextScheduledAt(): Promise<number | null> {
    return repo.nextScheduledAt(this.deps.store.reader);
  }

  /** Milliseconds until a paced step may run again (0: now). */
  paceWait(): number {
    this.refill();
    const want = this.threshold();
    return this.tokens >= want ? 0 : Math.ceil(((want - this.tokens) / this.deps.maxPerSecond) * 1000);
  }

  /** A broadcast whose step failed unexpectedly is left alone for a while (the others go on). */
  backOff(id: string): void {
    this.retryAt.set(id, this.deps.clock.now() + PAUSE_MS);
  }

  private refill(): void {
    const now = this.deps.clock.now();
    this.tokens = Math.min(this.capacity(), this.tokens + ((now - this.filledAt) / 1000) * this.deps.maxPerSecond);
    this.filledAt = now;
  }

  /**
   * One batch of one broadcast; whether the broadcast has more to do.
   * `sharing`: how many live broadcasts are paced now (each takes its share of the tokens).
   */
  async step(broadcast: Broadcast, sharing = 1): Promise<boolean> {
    const b = broadcast.status === 'scheduled' ? await this.begin(broadcast) : broadcast;
    if (!b || b.status !== 'sending') return false;
    const live = b.environment === 'live';
    this.refill();
    if (live && this.tokens < this.threshold()) return true;
    const room = live ? Math.max(1, Math.floor(this.tokens / Math.max(1, sharing))) : FAN_OUT_BATCH;
    let next: Broadcast;
    try {
      const batch = await prepareBatch(
        {
          db: this.deps.store.reader,
          now: this.deps.clock.now(),
          key: await this.deps.key(),
          publicUrl: this.deps.publicUrl,
          inline: this.inline(b),
          renderTemplate: this.deps.renderTemplate,
        },
        b,
        Math.min(room, FAN_OUT_BATCH),
        FAN_OUT_BATCH,
      );
      // the next batch is read and rendered while the last one's commit goes to disk; it commits after that
      await this.lastDurable;
      const committed = await this.deps.accept.storeAlong(
        (trx, store) => this.commit(trx, b, batch, store),
        [b.projectId],
      );
      this.lastDurable = committed.durable.catch((e: unknown) =>
        this.deps.logger.error({ err: e, broadcast: b.id }, 'a fan-out batch could not be made durable'),
      );
      next = committed.value;
    } catch (e) {
      if (e instanceof Overtaken) return false;
      if (e instanceof Paused) return this.pause(b, e.message);
      if (e instanceof Orphaned) return this.end(b, e.message);
      throw e;
    }
    if (live) this.tokens -= next.queued - b.queued;
    this.retryAt.delete(b.id);
    if (next.status !== 'sending') this.compiled.delete(b.id);
    return next.status === 'sending';
  }

  private inline(b: Broadcast): TemplateVersion | null {
    if (!this.compiled.has(b.id)) this.compiled.set(b.id, compileInline(b.content));
    return this.compiled.get(b.id)!;
  }

  /** A scheduled broadcast whose time has come begins: its contacts are those created by now. */
  private async begin(b: Broadcast): Promise<Broadcast | null> {
    return this.deps.store.tx(async (trx) => {
      await lockRows(trx, 'broadcasts', [b.id]);
      const current = await repo.broadcastById(trx, b.id);
      if (!current || current.status !== 'scheduled') return current;
      const begun = beginScheduled(current, this.deps.clock.now());
      await repo.saveBroadcast(trx, begun);
      return begun;
    });
  }

  /** The broadcast waits (it keeps its cursor); `last_error` says why. */
  private async pause(b: Broadcast, reason: string): Promise<boolean> {
    this.retryAt.set(b.id, this.deps.clock.now() + PAUSE_MS);
    await this.deps.store.tx(async (trx) => {
      await lockRows(trx, 'broadcasts', [b.id]);
      const current = await repo.broadcastById(trx, b.id);
      if (current?.status === 'sending' && current.error !== `paused: ${reason}`)
        await repo.saveBroadcast(trx, { ...current, error: `paused: ${reason}`, updatedAt: this.deps.clock.now() });
    });
    this.deps.logger.warn({ broadcast: b.id, reason }, 'broadcast paused');
    return false;
  }

  /** What the broadcast sends to is gone: it ends, cancelled, sending nothing more. */
  private async end(b: Broadcast, reason: string): Promise<boolean> {
    await this.deps.store.tx(async (trx) => {
      await lockRows(trx, 'broadcasts', [b.id]);
      const current = await repo.broadcastById(trx, b.id);
      if (current?.status === 'sending') await repo.saveBroadcast(trx, orphan(current, reason, this.deps.clock.now()));
    });
    this.deps.logger.warn({ broadcast: b.id, reason }, 'broadcast ended: what it sends to is gone');
    return false;
  }

  /** In the accept's transaction: the batch's emails, then the broadcast's cursor and counts (and broadcast.sent at the end). */
  private async commit(
    trx: Knex.Transaction,
    b: Broadcast,
    batch: { requests: AcceptRequest[]; tally: BatchTally },
    store: (r: AcceptRequest[]) => Promise<Array<Accepted | ApiError>>,
  ): Promise<Broadcast> {
    // the one lock order (docs/ARCHITECTURE.md): the project's row before the broadcast's, as the accept takes it
    await lockRows(trx, 'projects', [b.projectId]);
    await lockRows(trx, 'broadcasts', [b.id]);
    const current = await repo.broadcastById(trx, b.id);
    if (!current || current.status !== 'sending' || current.cursor !== b.cursor) throw new Overtaken();
    const tally = { ...batch.tally };
    const outcomes = batch.requests.length ? await store(batch.requests) : [];
    // the whole batch goes back (its savepoint): the broadcast waits and does it again later
    const pausing = outcomes.find((o): o is ApiError => o instanceof ApiError && PAUSING.includes(o.code));
    if (pausing) throw new Paused(pausing.message);
    for (const outcome of outcomes) {
      if (!(outcome instanceof ApiError)) tally.queued++;
      else if (outcome.code === 'recipient_suppressed') tally.suppressed++;
      else {
        tally.failed++;
        tally.error = outcome.message;
      }
    }
    const now = this.deps.clock.now();
    const next = afterBatch(current, tally, now);
    await repo.saveBroadcast(trx, next);
    if (next.status === 'sent') await insertEvents(trx, [sentEvent(next, now)]);
    return next;
  }
}

/** broadcast.sent: the fan-out is over; the counts so far (the emails' own events follow). */
function sentEvent(b: Broadcast, now: number): OutboxEvent {
  return {
    id: newId('event', now),
    projectId: b.projectId,
    type: 'broadcast.sent',
    emailId: null,
    recipient: null,
    simulated: b.environment === 'test',
    data: {
      broadcast_id: b.id,
      name: b.name,
      environment: b.environment,
      recipients: b.recipients,
      sent: b.queued,
      suppressed: b.suppressed,
      skipped: b.skipped,
      failed: b.failed,
    },
    createdAt: now,
  };
}
