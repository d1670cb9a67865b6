// How many requests each webhook endpoint gets in flight (no I/O).
//
// One endpoint with a fixed few requests in flight caps the dispatch rate at
// in-flight ÷ latency, however fast it answers. So each endpoint gets a window
// that adapts as TCP's does: it grows by one for every fast 2xx until the
// endpoint first shows overload (doubling per round trip), then by one per
// window's worth of them; a sign of overload halves it, down to one request at
// a time; a slow answer shrinks it back towards the starting window but not
// below it, so a slow endpoint that works keeps a few requests going and holds
// only those.
//
// Overload is what a server or its proxy says when it cannot keep up: no
// answer in time or no connection, 408, 429, 502, 503, 504. Any other non-2xx
// (a 500 from a handler that failed on one event, a 404, a 400) is an answer
// about that event, given promptly: it neither grows nor shrinks the window.
// Halving on those made an endpoint failing 5% of its events run about six
// requests at a time, a tenth of what it could take.

export interface WindowSettings {
  /** the window of an endpoint not heard from yet */
  initial: number;
  /** webhooks.endpoint_concurrency: the ceiling */
  max: number;
  /** an answer slower than this counts as the endpoint slowing down */
  slowMs: number;
}

/** What an answer says about the endpoint's load: a 2xx, overload, or neither. */
export type AnswerSignal = 'ok' | 'overloaded' | 'neutral';

const OVERLOAD_STATUSES = new Set([408, 429, 502, 503, 504]);

/** `status`: the HTTP status answered, null when none came (a timeout, a refused or broken connection). */
export function signalOf(status: number | null): AnswerSignal {
  if (status === null || OVERLOAD_STATUSES.has(status)) return 'overloaded';
  return status >= 200 && status <= 299 ? 'ok' : 'neutral';
}

interface EndpointWindow {
  size: number;
  /** below it the window doubles per round trip; above it, it grows by one */
  threshold: number;
}

export class EndpointWindows {
  private readonly windows = new Map<string, EndpointWindow>();
  /** this node's share of the ceiling (sharedBy) */
  private ceiling: number;

  constructor(private readonly s: WindowSettings) {
    this.ceiling = s.max;
  }

  /**
   * Several nodes post to the same endpoints, each with windows of its own:
   * each keeps to its share of the ceiling, so that an endpoint gets at most
   * about webhooks.endpoint_concurrency requests from all of them together.
   */
  sharedBy(nodes: number): void {
    this.ceiling = Math.max(1, Math.ceil(this.s.max / Math.max(1, nodes)));
  }

  /** requests this endpoint may have in flight now */
  limitOf(endpointId: string): number {
    return Math.floor(Math.min(this.ceiling, this.windows.get(endpointId)?.size ?? this.s.initial));
  }

  answered(endpointId: string, signal: AnswerSignal, durationMs: number): void {
    const w = this.windows.get(endpointId) ?? { size: this.s.initial, threshold: this.s.max };
    if (signal === 'overloaded') {
      w.threshold = Math.max(1, w.size / 2);
      w.size = w.threshold;
    } else if (durationMs > this.s.slowMs) {
      w.threshold = Math.max(this.s.initial, w.size / 2);
      w.size = Math.max(this.s.initial, w.size / 2);
    } else if (signal === 'ok') {
      w.size = Math.min(this.ceiling, w.size + (w.size < w.threshold ? 1 : 1 / w.size));
    }
    this.windows.set(endpointId, w);
  }

  /** the endpoints that have a window (the others are at the initial one) */
  endpointIds(): string[] {
    return [...this.windows.keys()];
  }

  /** an endpoint deleted, or paused: it starts over when it comes back */
  forget(endpointId: string): void {
    this.windows.delete(endpointId);
  }
}
