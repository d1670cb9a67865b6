import type { Logger } from '../log/logger.js';
import type { KeyAuthenticator } from '../modules/account/keys/keys.service.js';
import type { Role } from './role.js';

const FLUSH_MS = 5_000;

/** API keys' last-used times, kept in memory by the authenticator and written every few seconds (and at stop). */
export function startKeyUsage(auth: KeyAuthenticator, logger: Logger, everyMs = FLUSH_MS): Role {
  const timer = setInterval(() => {
    auth.flushLastUsed().catch((e: unknown) => logger.warn({ err: e }, 'could not record key last-used times'));
  }, everyMs);
  timer.unref();
  return {
    name: 'key-usage',
    async stop() {
      clearInterval(timer);
      await auth.flushLastUsed().catch(() => undefined);
    },
  };
}
