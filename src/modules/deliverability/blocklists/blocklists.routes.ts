import { keyedRoutes } from '../../account/keys/principal.js';
import type { BlocklistService } from './blocklists.service.js';
import { presentBlocklistCheck } from './blocklists.presenter.js';

const route = keyedRoutes<{ blocklists: BlocklistService }>();

// CONTRACT §5 names the events; the route is this appliance's (docs/blocklists.md)
export const blocklistRoutes = [
  route({
    method: 'GET',
    path: '/v1/blocklists',
    scope: 'domains:manage',
    summary:
      "What each watched DNS blocklist said at its last check of the appliance's outbound IPs and of the project's verified domains: state listed, clear or error, since when, the list's codes and reason",
    async handler({ services, principal }) {
      const checks = await services.blocklists.list(principal.project.id);
      return { status: 200, body: { object: 'list', data: checks.map(presentBlocklistCheck) } };
    },
  }),
];
