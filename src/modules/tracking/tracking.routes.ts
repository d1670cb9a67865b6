import type Router from '@koa/router';
import { apiError } from '../../lib/errors.js';
import type { Logger } from '../../log/logger.js';
import { verifyTrackingToken } from './token.js';
import { recordTracking, type TrackingDeps } from './tracking.service.js';

// A transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * The public tracking endpoints (no key: mail clients fetch them). A click
 * only ever redirects to the URL its token signed; a token that does not
 * verify is 404.
 */
export function trackingRoutes(router: Router, deps: TrackingDeps, logger: Logger): void {
  const claimOf = async (token: string, kind: 'open' | 'click') => {
    const claim = verifyTrackingToken(await deps.key(), token);
    if (!claim || claim.kind !== kind) throw apiError('not_found', 'no such tracking link');
    return claim;
  };
  const record = (claim: Parameters<typeof recordTracking>[1], ua: string) =>
    recordTracking(deps, claim, ua || null).catch((e: unknown) => logger.warn({ err: e }, 'could not record a tracking event'));

  router.get('/t/o/:token', async (ctx) => {
    const claim = await claimOf(ctx.params.token!, 'open');
    await record(claim, ctx.get('user-agent'));
    ctx.set('Cache-Control', 'no-store, private');
    ctx.type = 'image/gif';
    ctx.body = PIXEL;
  });

  router.get('/t/c/:token', async (ctx) => {
    const claim = await claimOf(ctx.params.token!, 'click');
    await record(claim, ctx.get('user-agent'));
    ctx.set('Cache-Control', 'no-store, private');
    ctx.status = 302;
    ctx.set('Location', claim.url!);
    ctx.body = '';
  });
}
