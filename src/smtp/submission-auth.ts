import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { authFailureDelayMs, type AuthThrottle } from '../lib/auth-throttle.js';
import { smtpDrops } from '../log/metrics.js';
import { authenticateGuarded, type Guarded } from '../modules/account/keys/guarded-auth.js';
import type { KeyAuthenticator } from '../modules/account/keys/keys.service.js';
import type { Principal } from '../modules/account/keys/principal.js';
import { isLoopback, smtpError, type ListenerOptions } from './listener.js';

export interface SubmissionAuthDeps {
  auth: KeyAuthenticator;
  /** failed authentications per client address, shared with the API and the dashboard (limits.auth_failures_per_ip) */
  throttle: AuthThrottle;
  /** the pause before a failed AUTH is answered, by the session's count of failures (authFailureDelayMs) */
  authFailureDelay?: (failuresInSession: number) => number;
}

/** The failed AUTH of a session that is answered 421 and closes it. */
export const AUTH_FAILURES_PER_SESSION = 3;

const WRONG_KEY = '5.7.8 authentication failed: the password must be an API key with the emails:send scope';

/**
 * AUTH on the submission listener (docs/security.md): offered and taken only
 * over TLS (STARTTLS or implicit), or from a trusted (loopback) client, so
 * that an API key never crosses a network in clear text. A failure is
 * answered after a pause that grows with the session's failures, the third
 * closes the connection, and a client address with too many failures in
 * the window (AuthThrottle) is refused before its key is looked up, unless
 * this process has already seen that key succeed.
 */
export function submissionAuth(o: ListenerOptions, deps: SubmissionAuthDeps) {
  const principals = new WeakMap<SMTPServerSession, Principal>();
  const failures = new WeakMap<SMTPServerSession, number>();
  const trusted = o.trustedAddress ?? isLoopback;
  const delay = deps.authFailureDelay ?? authFailureDelayMs;
  const clearText = (session: SMTPServerSession) => !session.secure && !trusted(session.remoteAddress);

  /** Answers a failed try after its pause; the third of the session is told 421, which closes it. */
  const fail = (session: SMTPServerSession, reply: Error, cb: (err: Error) => void) => {
    const n = (failures.get(session) ?? 0) + 1;
    failures.set(session, n);
    const last = n >= AUTH_FAILURES_PER_SESSION;
    if (last) {
      smtpDrops.inc({ listener: o.name, limit: 'auth_failures' });
      o.logger.info(
        { listener: o.name, limit: 'auth_failures', client: session.remoteAddress },
        'SMTP session dropped: auth_failures',
      );
    }
    setTimeout(
      () => cb(last ? smtpError(421, '4.7.0 too many failed authentications, closing connection') : reply),
      delay(n),
    ).unref();
  };

  const handlers: Partial<SMTPServerOptions> = {
    onConnect(session, cb) {
      // replaces the listener's list for this session: AUTH is neither announced in EHLO nor taken
      if (clearText(session)) session.disabledCommands = [...(o.tls.key && o.tls.cert ? [] : ['STARTTLS']), 'AUTH'];
      cb();
    },
    onSecure(_socket, session, cb) {
      // RFC 3207 §4.2: what the session knew before STARTTLS is forgotten
      session.disabledCommands = undefined;
      principals.delete(session);
      cb();
    },
    onAuth(auth, session, cb) {
      if (clearText(session)) return cb(smtpError(538, '5.7.11 encryption required: issue STARTTLS first'));
      authenticateGuarded(deps.auth, deps.throttle, session.remoteAddress, auth.password ?? '', 'submission').then(
        (got) => {
          const p = submitterOf(got);
          if (p instanceof Error) return fail(session, p, cb);
          principals.set(session, p);
          cb(null, { user: p.key.id });
        },
        (e: Error) => cb(smtpError(454, `4.7.0 temporary authentication failure (${e.message})`)),
      );
    },
  };
  return { handlers, principalOf: (session: SMTPServerSession): Principal | null => principals.get(session) ?? null };
}

/** Who a presented key lets submit mail, or the reply a failed AUTH earns (given after its pause). */
function submitterOf(got: Guarded): Principal | Error {
  if (got.kind === 'refused')
    return smtpError(454, `4.7.0 too many failed authentications from your address, try again in ${got.retryAfterS} s`);
  if (got.kind === 'wrong') return smtpError(535, WRONG_KEY);
  const p = got.principal;
  // a real key: not a guess, but no AUTH either
  if (!(p.key.scopes as readonly string[]).includes('emails:send')) return smtpError(535, WRONG_KEY);
  if (p.project.suspended) return smtpError(535, '5.7.8 this project is suspended');
  return p;
}
