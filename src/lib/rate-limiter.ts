import type { Clock } from './time.js';

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept at most: past this the least recently used goes (a client it forgets starts full again). */
const MAX_BUCKETS = 50_000;

/**
 * A token bucket per API key (limits.requests_per_second): it refills at that
 * rate and holds one second's worth, so a client may burst up to the limit
 * and is then paced to it. `capacity` gives a bucket of another size: a
 * limit per hour (a signup form's) lets its whole hour's worth through at once.
 *
 * Memory is bounded whoever calls: the map is kept in least-recently-used
 * order (a take moves its bucket to the end), at most `maxBuckets` long, and
 * each take drops the buckets at its front that have had time to refill
 * completely (they carry no information): amortised O(1), never a scan.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly capacity: number;
  /** a bucket untouched this long is full again whatever it held */
  private readonly refillMs: number;

  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock,
    capacity?: number,
    private readonly maxBuckets = MAX_BUCKETS,
  ) {
    this.capacity = Math.max(1, capacity ?? perSecond);
    this.refillMs = (this.capacity / perSecond) * 1000;
  }

  /** How many buckets are kept (tests). */
  get size(): number {
    return this.buckets.size;
  }

  /** null when allowed; otherwise the whole seconds to wait (Retry-After). */
  take(id: string): number | null {
    const now = this.clock.now();
    this.dropRefilled(now);
    const b = this.refilled(id, now);
    // delete then set: the map's order is the order of last use
    this.buckets.delete(id);
    this.buckets.set(id, b);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return null;
    }
    return this.waitFor(b);
  }

  /** What take would answer, taking nothing and keeping no bucket: a check before another limiter's take. */
  wait(id: string): number | null {
    const b = this.refilled(id, this.clock.now());
    return b.tokens >= 1 ? null : this.waitFor(b);
  }

  private refilled(id: string, now: number): Bucket {
    const b = this.buckets.get(id);
    if (!b) return { tokens: this.capacity, at: now };
    // a clock stepped back refills nothing (and takes nothing away)
    return { tokens: Math.min(this.capacity, b.tokens + (Math.max(0, now - b.at) / 1000) * this.perSecond), at: now };
  }

  private waitFor(b: Bucket): number {
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  private dropRefilled(now: number): void {
    for (const [id, b] of this.buckets) {
      // the front is the least recently used: once one is not refilled yet, none after it is
      if (now - b.at < this.refillMs) return;
      this.buckets.delete(id);
    }
  }
}

/**
 * The key of a client address for a per-client limit: an IPv4 address (also
 * one mapped into IPv6) as it is, an IPv6 address by its /64, which one
 * subscriber commonly holds whole (RFC 6177), so that walking through it
 * does not make a new client per address.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const bare = ip.replace(/%.*$/, '').toLowerCase();
  const [head = '', tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
