import { PassThrough, type Readable } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { commentFrame, eventFrame, HEARTBEAT_MS, type ListenFrame, type ListenSink } from './listen-stream.js';

/**
 * What a reader that does not keep up may have waiting. Beyond it a
 * delivery to it fails, and the dispatcher retries it on schedule, rather
 * than the API's memory growing without bound.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** after which a stream that was ended on close, but whose reader does not read to its end, is cut */
const END_GRACE_MS = 1_000;

interface Listener {
  stream: PassThrough;
  /** settles once the stream has closed and its onClosed has run */
  done: Promise<void>;
}

/**
 * The `posthorn listen` streams connected to this process's API, by
 * endpoint id. The dispatcher remains the one writer of delivery state: it
 * claims, attempts and records a listen endpoint's deliveries like any
 * other, and its POST for a listen url is a write here (written: 200; no
 * stream connected in this process: an error, retried on schedule).
 * Koa destroys a response's body stream when the connection closes, so a
 * stream's `close` is the listener going away, however it went.
 */
export class ListenHub {
  private readonly listeners = new Map<string, Listener>();
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  /**
   * A stream for endpointId's deliveries; `onClosed` runs when it closes
   * (the endpoint is deleted then). Null when the endpoint has a stream
   * already, or the hub is closing.
   */
  connect(endpointId: string, onClosed: () => Promise<void>): Readable | null {
    if (this.closed || this.listeners.has(endpointId)) return null;
    const stream = new PassThrough();
    const done = new Promise<void>((resolve) => {
      stream.once('close', () => {
        this.listeners.delete(endpointId);
        if (!this.listeners.size) this.stopHeartbeat();
        onClosed()
          .catch((e: unknown) => this.logger.warn({ err: e, endpoint: endpointId }, 'a closed listen endpoint could not be deleted'))
          .finally(resolve);
      });
    });
    this.listeners.set(endpointId, { stream, done });
    // the first bytes send the response's headers: the client knows it is connected
    stream.write(commentFrame(`listening: ${endpointId}`));
    this.startHeartbeat();
    return stream;
  }

  /** Written to endpointId's stream: false when none is connected here, or its reader lags too far behind. */
  deliver(endpointId: string, frame: ListenFrame): boolean {
    const stream = this.listeners.get(endpointId)?.stream;
    if (!stream || stream.destroyed || stream.writableEnded || stream.writableLength > MAX_BUFFERED_BYTES) return false;
    stream.write(eventFrame(frame));
    return true;
  }

  /** The dispatcher's way in when it runs in this thread. */
  readonly sink: ListenSink = async (endpointId, frame) => this.deliver(endpointId, frame);

  connected(endpointId: string): boolean {
    return this.listeners.has(endpointId);
  }

  /** Ends endpointId's stream, if it is connected here (its endpoint was deleted). */
  disconnect(endpointId: string): void {
    this.listeners.get(endpointId)?.stream.end();
  }

  /** close() was called: no new stream */
  get closing(): boolean {
    return this.closed;
  }

  /** Ends every stream (the API is stopping) and waits for their endpoints to be deleted. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.listeners.values()];
    for (const { stream } of open) stream.end();
    const cut = setTimeout(() => open.forEach(({ stream }) => stream.destroy()), END_GRACE_MS);
    await Promise.all(open.map((l) => l.done));
    clearTimeout(cut);
    this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const { stream } of this.listeners.values()) if (!stream.writableEnded) stream.write(commentFrame('heartbeat'));
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
