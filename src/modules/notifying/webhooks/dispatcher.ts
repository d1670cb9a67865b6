import { setMaxListeners } from 'node:events';
import { webhookAttempts } from '../../../log/metrics.js';
import { Waker } from '../../../lib/waker.js';
import { Batcher } from '../../../store/batcher.js';
import { isStorageRefusal } from '../../../lib/storage-full.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import type { GroupCommit } from '../../../store/group-commit.js';
import type { Store } from '../../../store/store.js';
import { findEventsById, type OutboxEvent } from '../events/events.repo.js';
import { afterAttempt } from './deliveries.js';
import { DeliveryClaims } from './delivery-claims.js';
import { fanOutEvents } from './fan-out.js';
import { EndpointWindows, signalOf, type WindowSettings } from './endpoint-windows.js';
import { InFlightRequests } from './in-flight.js';
import { eventBody, postSigned, type PostContext, type WebhookPost } from './signed-post.js';
import * as deliveryRepo from './webhook-deliveries.repo.js';
import type { ClaimedDelivery } from './webhook-deliveries.repo.js';
import * as repo from './webhooks.repo.js';

export interface DispatcherOptions {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  owner: string;
  post: WebhookPost;
  /** delay before each attempt (webhooks.retry_schedule, at most 8) */
  attemptDelaysMs: readonly number[];
  userAgent: string;
  /** each endpoint's requests in flight (endpoint-windows.ts): within webhooks.endpoint_concurrency */
  windows?: Partial<WindowSettings>;
  /** webhooks.concurrency: requests in flight in all */
  concurrency?: number;
  /** webhooks.timeout_ms: the longest a POST may take, which the lease must outlast */
  requestTimeoutMs?: number;
  /** a claim older than this belongs to a process that died: the attempt is made again (at least once); default leaseFor(requestTimeoutMs) */
  leaseMs?: number;
  idleMs?: number;
}

/** An endpoint's window starts at a few requests and adapts up to the ceiling (endpoint-windows.ts). */
const DEFAULT_WINDOWS: WindowSettings = { initial: 4, max: 64, slowMs: 1000 };
const DEFAULT_CONCURRENCY = 256;
/** events a fan-out takes at once: 500 events to ten endpoints are 5,000 rows in its transaction */
const FAN_OUT_BATCH = 500;
/**
 * How often the windows of endpoints deleted since (by any process) are
 * dropped: a deleted endpoint's deliveries go with it, so most are never
 * claimed again to tell, and every `posthorn listen` makes and deletes one.
 */
const WINDOWS_PRUNE_MS = 10 * 60_000;

/** A claimed delivery with what its POST needs (null: deleted since it was claimed). */
type Claimed = deliveryRepo.WebhookDelivery & {
  emailId: string | null;
  event: OutboxEvent | null;
  endpoint: repo.Endpoint | null;
};

/**
 * A lease must outlast the request it covers, or a second process takes the
 * delivery over and POSTs it while the first is still waiting for its answer.
 * webhooks.timeout_ms has no maximum, so the lease follows it.
 */
export function leaseFor(requestTimeoutMs = 0): number {
  return Math.max(2 * 60_000, requestTimeoutMs + 60_000);
}

/**
 * Reads the event outbox, creates one delivery per (event, subscribed
 * active endpoint) in the transaction that marks the event fanned out, and
 * POSTs due deliveries signed (interface §6). Attempts are rows with a due
 * time, not timers: they survive restarts and kill -9.
 *
 * A paused endpoint (active: false) is treated as Stripe treats a disabled
 * one: events that happen while it is paused get no delivery to it (a
 * replay by event id sends one), and deliveries already pending wait,
 * unclaimed, until it is active again, then go out on their schedule. A
 * deleted endpoint's deliveries are deleted with it.
 */
export class WebhookDispatcher {
  private stopped = true;
  private loop: Promise<void> | null = null;
  private readonly waker = new Waker();
  private readonly inFlight: InFlightRequests;
  private readonly running = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private readonly windows: EndpointWindows;
  private windowsPrunedAt = 0;
  /** events were written since the last fan-out (or it left some): fan out before the next claim */
  private fanOutDue = true;
  private fannedOutAt = 0;
  private readonly claims: DeliveryClaims;
  private readonly postContext: PostContext;
  /** attempts that ended while the last batch was being written go in the next, together */
  private readonly recorder = new Batcher<deliveryRepo.FinishedAttempt>(async (items) => {
    const recorded = await this.o.writer.run((trx) => deliveryRepo.finishAttempts(trx, this.o.owner, items));
    for (const { attempt } of items)
      if (!recorded.has(attempt.deliveryId))
        this.o.logger.warn(
          { delivery: attempt.deliveryId, attempt: attempt.attempt },
          'a webhook attempt ended after its lease was taken over or its endpoint deleted; not recorded',
        );
  });

  constructor(private readonly o: DispatcherOptions) {
    this.windows = new EndpointWindows({ ...DEFAULT_WINDOWS, ...o.windows });
    this.inFlight = new InFlightRequests(this.windows);
    this.claims = new DeliveryClaims(o.writer, this.inFlight);
    this.postContext = { post: o.post, userAgent: o.userAgent, clock: o.clock, signal: this.shutdown.signal };
    // every request in flight listens for the shutdown
    setMaxListeners(0, this.shutdown.signal);
  }

  async start(): Promise<void> {
    // On SQLite this process is the only dispatcher: any claim left in the store is from a
    // process that died mid-request, so its attempt is made again now (at least once).
    if (this.o.store.client === 'sqlite') await this.o.writer.run((trx) => deliveryRepo.dropDeliveryLeases(trx));
    this.stopped = false;
    this.loop = this.run();
  }

  /** New events were written: fan them out now. */
  wake(): void {
    this.fanOutDue = true;
    this.waker.wake();
  }

  /** How many nodes dispatch from this database (this one included): each keeps to its share of an endpoint's ceiling. */
  sharedBy(nodes: number): void {
    this.windows.sharedBy(nodes);
  }

  /** Requests in flight are cut short and not recorded: their claim makes them go out again (at least once). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.shutdown.abort();
    this.wake();
    await this.loop;
    await Promise.all(this.running);
  }

  private async run(): Promise<void> {
    const concurrency = this.o.concurrency ?? DEFAULT_CONCURRENCY;
    while (!this.stopped) {
      let busy = false;
      try {
        await this.pruneWindows();
        const idleMs = this.o.idleMs ?? 500;
        if (this.fanOutDue || this.o.clock.now() - this.fannedOutAt >= idleMs) {
          this.fanOutDue = false;
          this.fannedOutAt = this.o.clock.now();
          const fanned = await this.fanOut();
          // what this fan-out made may be for endpoints not in flight: looked for at once
          if (fanned > 0) {
            busy = true;
            this.claims.lookEverywhere();
          }
          if (fanned >= FAN_OUT_BATCH) this.fanOutDue = true;
        }
        const room = concurrency - this.running.size;
        if (room > 0) {
          const claimed = await this.claim(room);
          for (const d of claimed) this.track(d);
          busy ||= claimed.length > 0;
        }
      } catch (e) {
        // a full disk is logged by the store, once a minute
        if (!isStorageRefusal(e)) this.o.logger.error({ err: e }, 'webhook dispatch failed; retrying');
      }
      if (!busy) await this.waker.sleep(this.o.idleMs ?? 500);
      else if (this.running.size >= concurrency) await this.waker.sleep(this.o.idleMs ?? 500);
    }
  }

  private async pruneWindows(): Promise<void> {
    const now = this.o.clock.now();
    if (now - this.windowsPrunedAt < WINDOWS_PRUNE_MS) return;
    this.windowsPrunedAt = now;
    const ids = this.windows.endpointIds();
    if (!ids.length) return;
    const existing = await repo.existingEndpointIds(this.o.store.reader, ids);
    for (const id of ids) if (!existing.has(id)) this.windows.forget(id);
  }

  /** Events → deliveries, in the transaction that marks the events fanned out. */
  async fanOut(): Promise<number> {
    const now = this.o.clock.now();
    return this.o.writer.run((trx) => fanOutEvents(trx, now, this.o.attemptDelaysMs[0] ?? 0, FAN_OUT_BATCH));
  }

  private async claim(room: number): Promise<Claimed[]> {
    const now = this.o.clock.now();
    const lease = { owner: this.o.owner, until: now + (this.o.leaseMs ?? leaseFor(this.o.requestTimeoutMs)) };
    const taken = await this.claims.take(now, room, lease);
    return this.withEventsAndEndpoints(taken);
  }

  /** The events and endpoints of a claimed batch, read in two queries rather than two per delivery. */
  private async withEventsAndEndpoints(taken: ClaimedDelivery[]): Promise<Claimed[]> {
    if (!taken.length) return [];
    const [events, endpoints] = await Promise.all([
      findEventsById(
        this.o.store.reader,
        taken.map((d) => d.eventId),
      ),
      repo.findEndpointsById(
        this.o.store.reader,
        taken.map((d) => d.endpointId),
      ),
    ]);
    return taken.map((d) => ({
      ...d,
      event: events.get(d.eventId) ?? null,
      endpoint: endpoints.get(d.endpointId) ?? null,
    }));
  }

  private track(d: Claimed): void {
    this.inFlight.add(d);
    let left = false;
    // The request leaves its endpoint's window once answered, before its record's commit and fsync:
    // holding the slot for those too cut one endpoint's rate by a third.
    const leave = () => {
      if (left) return;
      left = true;
      this.inFlight.remove(d);
      this.waker.wake();
    };
    const p = this.attempt(d, leave).catch((e: unknown) =>
      this.o.logger.error({ err: e, delivery: d.id }, 'webhook attempt could not be recorded'),
    );
    this.running.add(p);
    void p.finally(() => {
      this.running.delete(p);
      leave();
    });
  }

  private async attempt(d: Claimed, answered: () => void): Promise<void> {
    // read after the claim, just before the POST: an endpoint paused or deleted since is not posted to
    const { event, endpoint } = d;
    if (!endpoint) {
      this.windows.forget(d.endpointId);
      return;
    }
    if (!event) return;
    if (!endpoint.active) {
      this.windows.forget(endpoint.id);
      await this.o.writer.run((trx) => deliveryRepo.releaseDeliveries(trx, [d.id], this.o.owner));
      return;
    }
    const attempt = d.attempts + 1;
    const result = await postSigned(
      this.postContext,
      endpoint,
      event.id,
      attempt,
      eventBody(event, endpoint.payloadFormat),
    );
    if (!result) return;
    this.windows.answered(endpoint.id, signalOf(result.status), result.durationMs);
    answered();
    webhookAttempts.inc({ outcome: result.status === null ? 'error' : result.error === null ? 'success' : 'failure' });
    const finished = this.o.clock.now();
    await this.recorder.add({
      next: afterAttempt(d, result, finished, this.o.attemptDelaysMs),
      attempt: {
        deliveryId: d.id,
        attempt,
        statusCode: result.status,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
        createdAt: finished,
      },
    });
  }
}
