// How many requests each webhook endpoint gets in flight (no I/O).
//
// One endpoint with a fixed few requests in flight caps the dispatch rate at
// in-flight ÷ latency, however fast it answers. So each endpoint gets a window
// that adapts as TCP's does: it grows by one for every fast 2xx until the
// endpoint first fails (doubling per round trip), then by one per window's
// worth of them; a failure (an error, a timeout, a non-2xx) halves it, down to
// one request at a time; a slow answer shrinks it back towards the starting
// window but not below it, so a slow endpoint that works keeps a few requests
// going and holds only those.

export interface WindowSettings {
  /** the window of an endpoint not heard from yet */
  initial: number;
  /** webhooks.endpoint_concurrency: the ceiling */
  max: number;
  /** an answer slower than this counts as the endpoint slowing down */
  slowMs: number;
}

interface EndpointWindow {
  size: number;
  /** below it the window doubles per round trip; above it, it grows by one */
  threshold: number;
}

export class EndpointWindows {
  private readonly windows = new Map<string, EndpointWindow>();

  constructor(private readonly s: WindowSettings) {}

  /** requests this endpoint may have in flight now */
  limitOf(endpointId: string): number {
    return Math.floor(this.windows.get(endpointId)?.size ?? this.s.initial);
  }

  answered(endpointId: string, ok: boolean, durationMs: number): void {
    const w = this.windows.get(endpointId) ?? { size: this.s.initial, threshold: this.s.max };
    if (!ok) {
      w.threshold = Math.max(1, w.size / 2);
      w.size = w.threshold;
    } else if (durationMs > this.s.slowMs) {
      w.threshold = Math.max(this.s.initial, w.size / 2);
      w.size = Math.max(this.s.initial, w.size / 2);
    } else {
      w.size = Math.min(this.s.max, w.size + (w.size < w.threshold ? 1 : 1 / w.size));
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
