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
      await deps.store.knex.raw('select 1');
      pending = await deps.store.pendingMigrations();
    } catch (e) {
      deps.logger.warn({ err: e }, 'readiness check: database unavailable');
      throw apiError('service_unavailable', 'the database does not answer');
    }
    if (pending.length) throw apiError('service_unavailable', `migrations not applied: ${pending.join(', ')}`);
    ctx.body = { status: 'ready' };
  });
}
