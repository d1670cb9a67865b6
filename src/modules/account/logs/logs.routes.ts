import { keyedRoutes } from '../keys/principal.js';
import { presentRequestLog } from './logs.presenter.js';
import { ListLogsQuery } from './logs.schema.js';
import type { RequestLogService } from './logs.service.js';

const route = keyedRoutes<{ logs: RequestLogService }>();

// CONTRACT §5 "Logs"
export const logRoutes = [
  route({
    method: 'GET',
    path: '/v1/logs',
    scope: 'logs:read',
    summary:
      "The project's recent API requests, newest first (kept logs.retention; written a moment after each request)",
    query: ListLogsQuery,
    async handler({ services, principal, query }) {
      const { items, more } = await services.logs.list(principal.project.id, query);
      return {
        status: 200,
        body: {
          object: 'list',
          data: items.map(presentRequestLog),
          next_cursor: more ? items[items.length - 1].id : null,
        },
      };
    },
  }),
];
