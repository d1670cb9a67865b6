import { PassThrough, type Readable } from 'node:stream';
import type { Logger } from '../../../log/logger.js';
import {
  commentFrame,
  endFrame,
  eventFrame,
  HEARTBEAT_MS,
  type ListenEnd,
  type ListenFrame,
  type ListenOutcome,
  type ListenSink,
} from './listen-stream.js';

/**
 * What a reader that does not keep up may have waiting. Beyond it a
 * delivery to it fails, and the dispatcher retries it on schedule, rather
 * than the API's memory growing without bound.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** The error an attempt records for a delivery its stream did not take (a Record: every outcome has one). */
export const LISTEN_FAILURES: Record<Exclude<ListenOutcome, 'written'>, string> = {
  not_connected: 'no posthorn listen is connected to this endpoint',
  behind: `the posthorn listen connection is more than ${MAX_BUFFERED_BYTES / (1024 * 1024)} MiB behind; the event is retried`,
};

/** after which a stream that was ended, but whose reader does not read to its end, is cut */
const END_GRACE_MS = 1_000;

export interface ListenLimits {
  /** how often each stream carries a comment, and its key and endpoint are read again */
  heartbeatMs: number;
  /** a listen endpoint created here whose stream has not connected here by then is deleted */
  connectWithinMs: number;
  /** the streams this process holds at most: each is a connection and a buffer of up to MAX_BUFFERED_BYTES */
  maxStreams: number;
}

export const LISTEN_LIMITS: ListenLimits = { heartbeatMs: HEARTBEAT_MS, connectWithinMs: 60_000, maxStreams: 100 };

/** What a stream comes with: what to do once it closes, and whether it may stay open. */
export interface ListenSession {
  /** runs once the stream has closed, however it closed (the endpoint is deleted then) */
  onClosed: () => Promise<void>;
  /** run at each heartbeat: null while the stream may stay open, else why it ends */
  recheck: () => Promise<ListenEnd | null>;
}

export type Connected =
  { kind: 'connected'; stream: Readable } | { kind: 'taken' } | { kind: 'full' } | { kind: 'closing' };

interface Listener {
  stream: PassThrough;
  /** settles once the stream has closed and its onClosed has run */
  done: Promise<void>;
  recheck: ListenSession['recheck'];
  checking: boolean;
}

/**
 * The `posthorn listen` streams connected to this process's API, by
 * endpoint id. The dispatcher remains the one writer of delivery state: it
 * claims, attempts and records a listen endpoint's deliveries like any
 * other, and its POST for a listen url is a write here (ListenOutcome).
 * Koa destroys a response's body stream when the connection closes, so a
 * stream's `close` is the listener going away, however it went.
 */
export class ListenHub {
  private readonly listeners = new Map<string, Listener>();
  /** endpoints created here whose stream has not connected yet: their deletion, due at connectWithinMs */
  private readonly unconnected = new Map<string, { timer: NodeJS.Timeout; expire: () => Promise<void> }>();
  private readonly limits: ListenLimits;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    limits: Partial<ListenLimits> = {},
  ) {
    this.limits = { ...LISTEN_LIMITS, ...limits };
  }

  /**
   * endpointId was just created here: `expire` (its deletion) runs unless its
   * stream connects here within connectWithinMs. A CLI that dies between its
   * POST and its GET leaves nothing behind.
   */
  expectStream(endpointId: string, expire: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.unconnected.delete(endpointId);
      if (!this.listeners.has(endpointId))
        void this.settle(expire(), endpointId, 'an unconnected listen endpoint could not be deleted');
    }, this.limits.connectWithinMs);
    timer.unref();
    this.unconnected.set(endpointId, { timer, expire });
  }

  /** A stream for endpointId's deliveries, unless it has one, this process holds its most, or the hub is closing. */
  connect(endpointId: string, session: ListenSession): Connected {
    if (this.closed) return { kind: 'closing' };
    if (this.listeners.has(endpointId)) return { kind: 'taken' };
    if (this.listeners.size >= this.limits.maxStreams) return { kind: 'full' };
    const pending = this.unconnected.get(endpointId);
    if (pending) clearTimeout(pending.timer);
    this.unconnected.delete(endpointId);
    const stream = new PassThrough();
    const done = new Promise<void>((resolve) => {
      stream.once('close', () => {
        this.listeners.delete(endpointId);
        if (!this.listeners.size) this.stopHeartbeat();
        void this.settle(session.onClosed(), endpointId, 'a closed listen endpoint could not be deleted').finally(
          resolve,
        );
      });
    });
    this.listeners.set(endpointId, { stream, done, recheck: session.recheck, checking: false });
    // the first bytes send the response's headers: the client knows it is connected
    stream.write(commentFrame(`listening: ${endpointId}`));
    this.startHeartbeat();
    return { kind: 'connected', stream };
  }

  /** A delivery written to endpointId's stream, or why not. */
  deliver(endpointId: string, frame: ListenFrame): ListenOutcome {
    const stream = this.listeners.get(endpointId)?.stream;
    if (!stream || stream.destroyed || stream.writableEnded) return 'not_connected';
    if (stream.writableLength > MAX_BUFFERED_BYTES) return 'behind';
    stream.write(eventFrame(frame));
    return 'written';
  }

  /** The dispatcher's way in when it runs in this thread. */
  readonly sink: ListenSink = async (endpointId, frame) => this.deliver(endpointId, frame);

  connected(endpointId: string): boolean {
    return this.listeners.has(endpointId);
  }

  /** Ends endpointId's stream, if it is connected here (its endpoint was deleted). */
  disconnect(endpointId: string): void {
    this.end(endpointId, 'endpoint_deleted');
  }

  /** close() was called: no new stream */
  get closing(): boolean {
    return this.closed;
  }

  /**
   * Ends every stream (the API is stopping) and waits for their endpoints to
   * be deleted, with those of the endpoints created here whose stream never came.
   */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.listeners.values()];
    for (const id of this.listeners.keys()) this.end(id, 'server_stopping');
    const unconnected = [...this.unconnected].map(([id, { timer, expire }]) => {
      clearTimeout(timer);
      return this.settle(expire(), id, 'an unconnected listen endpoint could not be deleted');
    });
    this.unconnected.clear();
    await Promise.all([...open.map((l) => l.done), ...unconnected]);
    this.stopHeartbeat();
  }

  /** The stream's last line says why; a reader that does not read to it is cut after END_GRACE_MS. */
  private end(endpointId: string, reason: ListenEnd): void {
    const stream = this.listeners.get(endpointId)?.stream;
    if (!stream || stream.writableEnded) return;
    stream.end(endFrame(reason));
    const cut = setTimeout(() => stream.destroy(), END_GRACE_MS);
    cut.unref();
    stream.once('close', () => clearTimeout(cut));
  }

  private beat(): void {
    for (const [id, l] of this.listeners) {
      if (l.stream.writableEnded) continue;
      l.stream.write(commentFrame('heartbeat'));
      void this.recheck(id, l);
    }
  }

  /** A key revoked or a project suspended since the stream opened ends it, as a deletion made by another process does. */
  private async recheck(endpointId: string, l: Listener): Promise<void> {
    if (l.checking) return;
    l.checking = true;
    try {
      const reason = await l.recheck();
      if (reason) this.end(endpointId, reason);
    } catch (e) {
      this.logger.warn(
        { err: e, endpoint: endpointId },
        'could not check that a listen stream may stay open; checked again at the next heartbeat',
      );
    } finally {
      l.checking = false;
    }
  }

  private async settle(p: Promise<void>, endpointId: string, failure: string): Promise<void> {
    await p.catch((e: unknown) => this.logger.warn({ err: e, endpoint: endpointId }, failure));
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
