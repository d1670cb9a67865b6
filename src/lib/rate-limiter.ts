import type { Clock } from './time.js';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per API key (limits.requests_per_second): it refills at that
 * rate and holds one second's worth, so a client may burst up to the limit
 * and is then paced to it. `capacity` gives a bucket of another size: a
 * limit per hour (a signup form's) lets its whole hour's worth through at once.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly capacity: number;

  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock,
    capacity?: number,
  ) {
    this.capacity = Math.max(1, capacity ?? perSecond);
  }

  /** null when allowed; otherwise the whole seconds to wait (Retry-After). */
  take(id: string): number | null {
    const now = this.clock.now();
    const b = this.buckets.get(id) ?? { tokens: this.capacity, at: now };
    b.tokens = Math.min(this.capacity, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(id, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return null;
    }
    if (this.buckets.size > 10_000) this.sweep(now);
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Drop buckets that have refilled completely: they carry no information. */
  private sweep(now: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.capacity) this.buckets.delete(id);
    }
  }
}
