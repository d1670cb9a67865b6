import { routesFor } from '../../../lib/route.js';
import type { TrackingService } from './tracking.service.js';

const route = routesFor<{ tracking: TrackingService }, null, null>();

// A transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_STORE = { 'Cache-Control': 'no-store, private' };

// The public tracking endpoints: no key, mail clients fetch them (interface §6).
export const trackingRoutes = [
  route({
    method: 'GET',
    path: '/t/o/:token',
    scope: null,
    summary: 'Open pixel: records email.opened while the domain tracks opens',
    async handler(ctx) {
      const { services, params } = ctx;
      await services.tracking.open(params.token, ctx.header('user-agent') ?? null);
      return { status: 200, headers: { ...NO_STORE, 'Content-Type': 'image/gif' }, body: PIXEL };
    },
  }),
  route({
    method: 'GET',
    path: '/t/c/:token',
    scope: null,
    summary: 'Tracked link: records email.clicked while the domain tracks clicks, then redirects to the signed URL',
    async handler(ctx) {
      const { services, params } = ctx;
      const url = await services.tracking.click(params.token, ctx.header('user-agent') ?? null);
      return { status: 302, headers: { ...NO_STORE, Location: url }, body: '' };
    },
  }),
];
