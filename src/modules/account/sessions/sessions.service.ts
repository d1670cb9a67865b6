import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuthThrottle } from '../../../lib/auth-throttle.js';
import { apiError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import type { KeyAuthenticator } from '../keys/keys.service.js';
import { authenticateGuarded } from '../keys/guarded-auth.js';
import type { Principal } from '../keys/principal.js';
import { deleteExpiredSessions, deleteSession, findSession, insertSession } from './sessions.repo.js';

/** How long a dashboard sign-in lasts, whatever is done meanwhile: then the key is asked for again. */
export const SESSION_TTL_MS = 12 * 3600_000;

export interface SessionDeps {
  store: Store;
  clock: Clock;
  auth: KeyAuthenticator;
  /** failed sign-ins per client address, shared with the API and SMTP AUTH (limits.auth_failures_per_ip) */
  throttle: AuthThrottle;
}

/** A signed-in session as a page sees it: who acts, and the token its forms must send back. */
export interface Session {
  principal: Principal;
  csrfToken: string;
  expiresAt: number;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

/**
 * The dashboard's sessions: an API key is exchanged for a random session id
 * (the browser's cookie); the key itself is not kept. Every page resolves
 * the session to its key again, so that a revoked key or a suspended project
 * counts at once, through the same authenticator as the API.
 */
export function sessionService(deps: SessionDeps) {
  return {
    /**
     * `ip`: the client's address. While it is over limits.auth_failures_per_ip the
     * key is not looked at (429 rate_limited with Retry-After) unless this process
     * has seen it succeed; a wrong key counts against the address. An empty one
     * guesses nothing and counts against no one.
     */
    async signIn(bearer: string, ip: string): Promise<{ token: string; session: Session }> {
      const key = bearer.trim();
      if (!key) throw apiError('unauthorized', 'missing API key');
      const got = await authenticateGuarded(deps.auth, deps.throttle, ip, key, 'dashboard');
      if (got.kind === 'refused')
        throw apiError('rate_limited', `too many failed sign-ins from this address: retry in ${got.retryAfterS} s`, {
          'Retry-After': String(got.retryAfterS),
        });
      if (got.kind === 'wrong') throw apiError('unauthorized', 'invalid or revoked API key');
      const { principal } = got;
      if (principal.project.suspended) throw apiError('account_suspended', 'this project is suspended');
      const now = deps.clock.now();
      const token = newToken();
      const session = { principal, csrfToken: newToken(), expiresAt: now + SESSION_TTL_MS };
      await deps.store.tx(async (trx) => {
        // the table holds only live sessions: the expired ones go at each sign-in
        await deleteExpiredSessions(trx, now);
        await insertSession(trx, {
          idHash: hashOf(token),
          keyId: principal.key.id,
          csrfToken: session.csrfToken,
          createdAt: now,
          expiresAt: session.expiresAt,
        });
      });
      return { token, session };
    },

    /** null for an unknown or expired session, or one whose key was revoked since. */
    async resolve(token: string | undefined): Promise<Session | null> {
      if (!token || token.length > 100) return null;
      const row = await findSession(deps.store.reader, hashOf(token));
      if (!row || row.expiresAt <= deps.clock.now()) return null;
      const principal = await deps.auth.principalOfKey(row.keyId);
      return principal ? { principal, csrfToken: row.csrfToken, expiresAt: row.expiresAt } : null;
    },

    async signOut(token: string | undefined): Promise<void> {
      if (token) await deps.store.tx((trx) => deleteSession(trx, hashOf(token)));
    },

    /** A form's token against its session's, in constant time. */
    csrfMatches(session: Session, sent: string | undefined): boolean {
      if (!sent) return false;
      const [a, b] = [Buffer.from(session.csrfToken), Buffer.from(sent)];
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}

export type SessionService = ReturnType<typeof sessionService>;
