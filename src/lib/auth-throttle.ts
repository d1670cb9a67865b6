import { clientKey, RateLimiter } from './rate-limiter.js';
import type { Clock } from './time.js';

/** limits.auth_failures_per_ip and limits.auth_failure_window. */
export interface AuthThrottleSettings {
  failuresPerIp: number;
  windowMs: number;
}

/**
 * Failed authentications per client address (an IPv6 client by its /64),
 * shared by the API bearer, the dashboard sign-in and SMTP AUTH of one
 * process: each failure takes a token from the client's bucket, which
 * holds `failuresPerIp` and refills over `windowMs`. With the bucket empty
 * the client is refused (429 / 454 4.7.0 with Retry-After) before its key
 * is looked up, so guessing costs it a window per handful of tries. A key
 * this process has already seen succeed is let through even then (the
 * caller asks the authenticator first): a guesser behind the same address
 * as a real client does not lock that client out. Memory is bounded by the
 * rate limiter's LRU (50,000 clients).
 */
export class AuthThrottle {
  private readonly failures: RateLimiter;

  constructor(settings: AuthThrottleSettings, clock: Clock) {
    this.failures = new RateLimiter(settings.failuresPerIp / (settings.windowMs / 1000), clock, settings.failuresPerIp);
  }

  /** Whole seconds the client must wait before its next try, or null when it may try now. */
  refusedFor(ip: string): number | null {
    return this.failures.wait(clientKey(ip));
  }

  /** A failed try (a wrong, unknown or revoked key). */
  failed(ip: string): void {
    this.failures.take(clientKey(ip));
  }
}

/**
 * The pause before a failed SMTP AUTH is answered: 1 s, 2 s, 4 s for the
 * first, second and third failure of a session (after the third the session
 * is closed). A successful AUTH is answered at once.
 */
export const authFailureDelayMs = (failuresInSession: number): number =>
  1000 * 2 ** Math.max(0, Math.min(failuresInSession, 3) - 1);
