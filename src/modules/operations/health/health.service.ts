import { apiError } from '../../../lib/errors.js';
import { storageFull } from '../../../lib/storage-full.js';
import type { Logger } from '../../../log/logger.js';
import type { Store } from '../../../store/store.js';

/** A load balancer asks often and must hear "no" rather than wait on a database that hangs. */
const READY_TIMEOUT_MS = 2000;

/** CONTRACT §4: ready when the database answers and is migrated; and takes writes (not while its storage is full). */
export function healthService(store: Store, logger: Logger) {
  return {
    async ready(): Promise<void> {
      const fullSince = await withTimeout(store.storageFull(), READY_TIMEOUT_MS).catch(() => store.storage.fullSince());
      if (fullSince !== null)
        throw storageFull(
          `not ready: the server's storage has been full since ${new Date(fullSince).toISOString()}; writes are refused until space is freed`,
        );
      let pending: string[];
      try {
        pending = await withTimeout(
          (async () => {
            await store.ping();
            return store.pendingMigrations();
          })(),
          READY_TIMEOUT_MS,
        );
      } catch (e) {
        logger.warn({ err: e }, 'readiness check: database unavailable');
        throw apiError('service_unavailable', 'the database does not answer');
      }
      if (pending.length) throw apiError('service_unavailable', `migrations not applied: ${pending.join(', ')}`);
    },
  };
}

export type HealthService = ReturnType<typeof healthService>;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
