import type { Context, Middleware, Next } from 'koa';
import Router, { type RouterContext } from '@koa/router';
import { routeCaller } from '../api/route-caller.js';
import type { Services } from '../api/services.js';
import { ApiError } from '../lib/errors.js';
import { RateLimiter } from '../lib/rate-limiter.js';
import type { Clock } from '../lib/time.js';
import type { Logger } from '../log/logger.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { serveAsset } from './assets.js';
import { accountPages } from './account-pages.js';
import { broadcastPages } from './broadcast-pages.js';
import { contactPages } from './contact-pages.js';
import { domainPages } from './domain-pages.js';
import { emailPages } from './email-pages.js';
import { searchPages } from './search-pages.js';
import { inboundPages } from './inbound-pages.js';
import { templatePages } from './template-pages.js';
import { webhookPages } from './webhook-pages.js';
import { readForm } from './form.js';
import { BASE, errorPage } from './pages/layout.js';
import { COOKIE, page, redirectToSignIn, seeOther, type PagesDeps, type SignedInHandler } from './respond.js';
import { sessionPages } from './session-pages.js';

export interface DashboardOptions {
  /** http.public_url: its scheme decides whether the cookie is Secure */
  publicUrl: string | null;
  logger: Logger;
  /** limits.requests_per_second, per key, as in the API */
  requestsPerSecond: number;
  clock: Clock;
}

// No inline script or style anywhere: the pages load one script and one stylesheet of their own.
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The web dashboard at /dashboard: pages rendered on the server from the
 * same /v1 routes the API serves, called in process with the signed-in
 * key (api/route-caller.ts), so that a page shows only what the key may see
 * and does only what it may do.
 */
export function dashboard(services: Services, o: DashboardOptions): Middleware {
  const router = new Router({ prefix: BASE, sensitive: true });
  const limiter = new RateLimiter(o.requestsPerSecond, o.clock);
  const deps: PagesDeps = {
    router,
    services,
    call: routeCaller(services),
    secure: o.publicUrl?.startsWith('https://') ?? false,
    signedIn: (h) => signedIn(services, limiter, h),
  };
  router.get(
    '/',
    deps.signedIn(async (ctx) => seeOther(ctx, `${BASE}/emails`)),
  );
  sessionPages(deps);
  emailPages(deps);
  searchPages(deps);
  domainPages(deps);
  inboundPages(deps);
  templatePages(deps);
  webhookPages(deps);
  contactPages(deps);
  broadcastPages(deps);
  accountPages(deps);
  router.get('/assets/:name', (ctx) => serveAsset(ctx, ctx.params.name));
  const routes = router.routes();

  return async (ctx: Context, next: Next) => {
    if (ctx.path !== BASE && !ctx.path.startsWith(`${BASE}/`)) {
      await next();
      return;
    }
    setSecurityHeaders(ctx);
    if (ctx.path === BASE) return ctx.redirect(`${BASE}/`);
    // SameSite=Strict keeps the cookie off other sites' posts; a post from another origin is refused
    // as well (the sign-in form has no session yet, and so no CSRF token, to check).
    if (ctx.method === 'POST' && !sameOrigin(ctx, o.publicUrl))
      return page(ctx, 403, errorPage(null, 403, 'This form was sent from another site.'));
    try {
      await routes(ctx as Parameters<typeof routes>[0], async () => undefined);
      if (ctx.body == null && ctx.status === 404)
        page(ctx, 404, errorPage((ctx.state.session as Session | undefined) ?? null, 404, 'There is no such page.'));
    } catch (e) {
      const session = (ctx.state.session as Session | undefined) ?? null;
      if (e instanceof ApiError && e.code === 'unauthorized') return redirectToSignIn(ctx);
      if (e instanceof ApiError && e.status < 500) return page(ctx, e.status, errorPage(session, e.status, e.message));
      o.logger.error({ err: e, request_id: ctx.state.requestId }, 'dashboard page failed');
      page(ctx, 500, errorPage(session, 500, `The page could not be shown (request ${String(ctx.state.requestId)}).`));
    }
  };
}

/** A handler behind sign-in: the session is resolved again at every request, and a POST must carry the session's CSRF token. */
function signedIn(services: Services, limiter: RateLimiter, handler: SignedInHandler) {
  return async (ctx: RouterContext) => {
    const session = await services.sessions.resolve(ctx.cookies.get(COOKIE));
    if (!session) return redirectToSignIn(ctx);
    ctx.state.session = session;
    // as for an API request: the request log (and GET /v1/logs) names the key, and its rate limit holds
    ctx.state.principal = session.principal;
    const wait = limiter.take(session.principal.key.id);
    if (wait !== null) {
      ctx.set('Retry-After', String(wait));
      return page(ctx, 429, errorPage(session, 429, `Too many requests with this key: try again in ${wait} s.`));
    }
    if (ctx.method === 'POST') {
      const { fields, files } = await readForm(ctx);
      ctx.state.form = fields;
      ctx.state.files = files;
      if (!services.sessions.csrfMatches(session, fields.get('csrf') ?? undefined))
        return page(
          ctx,
          403,
          errorPage(session, 403, 'This form has expired. Go back, reload the page and try again.'),
        );
    }
    await handler(ctx, session);
  };
}

function setSecurityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

function sameOrigin(ctx: Context, publicUrl: string | null): boolean {
  const origin = ctx.get('origin');
  if (!origin) return true;
  return origin === `${ctx.protocol}://${ctx.host}` || (publicUrl !== null && origin === new URL(publicUrl).origin);
}
