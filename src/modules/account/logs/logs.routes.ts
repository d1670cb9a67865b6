import { keyedRoutes } from '../keys/principal.js';
import { presentRequestLog } from './logs.presenter.js';
import { ListLogsQuery } from './logs.schema.js';
import type { RequestLogService } from './logs.service.js';
import { listBody } from '../../../lib/page.js';

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
      return { status: 200, body: listBody(await services.logs.list(principal.project.id, query), presentRequestLog) };
    },
  }),
];
