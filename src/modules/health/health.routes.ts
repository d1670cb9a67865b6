import type Router from '@koa/router';
import type { ApiDeps } from '../../api/deps.js';
import { apiError } from '../../lib/errors.js';

/** CONTRACT §4: /healthz answers once the API listens; /readyz when the database answers and is migrated. No key. */
export function healthRoutes(router: Router, deps: ApiDeps): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    let pending: string[];
    try {
      pending = await withTimeout(
        (async () => {
          await deps.store.reader.raw('select 1');
          return deps.store.pendingMigrations();
        })(),
        READY_TIMEOUT_MS,
      );
    } catch (e) {
      deps.logger.warn({ err: e }, 'readiness check: database unavailable');
      throw apiError('service_unavailable', 'the database does not answer');
    }
    if (pending.length) throw apiError('service_unavailable', `migrations not applied: ${pending.join(', ')}`);
    ctx.body = { status: 'ready' };
  });
}

/** A load balancer asks often and must hear "no" rather than wait on a database that hangs. */
const READY_TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
