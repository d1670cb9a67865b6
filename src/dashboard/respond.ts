import type { Context } from 'koa';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { RouteCaller } from '../api/route-caller.js';
import type { Services } from '../api/services.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { Html } from './pages/html.js';
import { BASE } from './pages/layout.js';

export const COOKIE = 'posthorn_session';

// An email's own HTML, shown in a sandboxed frame from its own address: no script, nothing fetched
// from elsewhere (no tracking pixel fires when it is looked at), inline styles kept.
const EMAIL_CSP =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; frame-ancestors 'self'";

/** What the dashboard's route groups are given. */
export interface PagesDeps {
  router: Router;
  services: Services;
  call: RouteCaller;
  /** the session cookie carries Secure (http.public_url is https) */
  secure: boolean;
  /** wraps a handler that needs a signed-in session (and, for a POST, the form's CSRF token) */
  signedIn: (handler: SignedInHandler) => (ctx: RouterContext) => Promise<void>;
}

export type SignedInHandler = (ctx: RouterContext, session: Session) => Promise<void>;

export function page(ctx: Context, status: number, body: Html): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body.value;
}

/** An email's own HTML (a sent email's, a received one's, a rendered template's) for the sandboxed frame of a page. */
export function emailHtml(ctx: Context, body: string | null): void {
  ctx.set('Content-Security-Policy', EMAIL_CSP);
  ctx.set('X-Frame-Options', 'SAMEORIGIN');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body ?? '';
}

export function redirectToSignIn(ctx: Context): void {
  // a page fragment (the live refresh) is not where to come back to
  const next =
    ctx.method === 'GET' && !ctx.path.endsWith('/state') ? `?next=${encodeURIComponent(ctx.originalUrl)}` : '';
  ctx.status = 303;
  ctx.redirect(`${BASE}/sign-in${next}`);
}

export function seeOther(ctx: Context, to: string): void {
  ctx.status = 303;
  ctx.redirect(to);
}

/** The route's :id, encoded again for the /v1 path it goes into (a `/` or `%` in it stays inside the id). */
export function idOf(ctx: RouterContext): string {
  return encodeURIComponent(ctx.params.id);
}

/** A query parameter's value, trimmed; undefined when absent or blank. */
export function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/**
 * A delete behind a confirmation: GET {list}/:id/delete shows `confirm` for what `read` finds (another
 * project's is the API's 404), and its form's POST calls DELETE /v1{list}/:id, then goes where `after`
 * says, given the DELETE's answer (the list, saying what went).
 */
export function deleteRoutes<T>(
  { router, call, signedIn }: Pick<PagesDeps, 'router' | 'call' | 'signedIn'>,
  list: string,
  o: {
    read: (session: Session, id: string) => Promise<T>;
    confirm: (session: Session, item: T) => Html;
    after: (id: string, deleted: unknown) => string;
  },
): void {
  router.get(
    `${list}/:id/delete`,
    signedIn(async (ctx, session) => page(ctx, 200, o.confirm(session, await o.read(session, idOf(ctx))))),
  );
  router.post(
    `${list}/:id/delete`,
    signedIn(async (ctx, session) => {
      const deleted = await call(session.principal, 'DELETE', `/v1${list}/${idOf(ctx)}`);
      seeOther(ctx, `${BASE}${o.after(idOf(ctx), deleted.body)}`);
    }),
  );
}
