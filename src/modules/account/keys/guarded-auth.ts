import type { AuthThrottle } from '../../../lib/auth-throttle.js';
import { authFailures, authRefusals } from '../../../log/metrics.js';
import type { KeyAuthenticator } from './keys.service.js';
import type { Principal } from './principal.js';

/** What a presented key comes to once the client's address has been looked at. */
export type Guarded =
  { kind: 'principal'; principal: Principal } | { kind: 'refused'; retryAfterS: number } | { kind: 'wrong' };

/**
 * The one rule of every key a stranger may present (API bearer, dashboard
 * sign-in, SMTP AUTH; docs/security.md): while `ip` is over
 * limits.auth_failures_per_ip it is refused before the key is looked up,
 * unless this process has seen that key succeed; a wrong key (malformed,
 * unknown, revoked, or `undefined` for credentials of another kind) counts
 * against the address. Counted in /metrics under `listener`.
 */
export async function authenticateGuarded(
  auth: KeyAuthenticator,
  throttle: AuthThrottle,
  ip: string,
  key: string | undefined,
  listener: 'api' | 'dashboard' | 'submission',
): Promise<Guarded> {
  const wait = key !== undefined && auth.known(key) ? null : throttle.refusedFor(ip);
  if (wait !== null) {
    authRefusals.inc({ listener });
    return { kind: 'refused', retryAfterS: wait };
  }
  const principal = key === undefined ? null : await auth.authenticate(key);
  if (principal) return { kind: 'principal', principal };
  throttle.failed(ip);
  authFailures.inc({ listener });
  return { kind: 'wrong' };
}
