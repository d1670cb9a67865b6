import { routesFor } from '../../../lib/route.js';
import type { HealthService } from './health.service.js';

const route = routesFor<{ health: HealthService }, null, null>();

// CONTRACT §4: no key.
export const healthRoutes = [
  route({
    method: 'GET',
    path: '/healthz',
    scope: null,
    summary: 'Answers once the API listens',
    async handler() {
      return { status: 200, body: { status: 'ok' } };
    },
  }),
  route({
    method: 'GET',
    path: '/readyz',
    scope: null,
    summary:
      'Answers when the database answers, is migrated and takes writes; 503 otherwise (storage_full while the disk is full)',
    async handler({ services }) {
      await services.health.ready();
      return { status: 200, body: { status: 'ready' } };
    },
  }),
];
