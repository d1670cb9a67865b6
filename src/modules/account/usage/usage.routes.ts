import { keyedRoutes } from '../keys/principal.js';
import { presentUsage } from './usage.presenter.js';
import type { UsageService } from './usage.service.js';

const route = keyedRoutes<{ usage: UsageService }>();

// CONTRACT §5 "Usage"
export const usageRoutes = [
  route({
    method: 'GET',
    path: '/v1/usage',
    scope: 'usage:read',
    summary:
      "The project's live sends today and this month (UTC), verifications this month, and its limits (0 = unlimited)",
    async handler({ services, principal }) {
      return { status: 200, body: presentUsage(await services.usage.get(principal.project.id)) };
    },
  }),
];
