import Koa, { type Context, type Middleware, type Next } from 'koa';
import Router from '@koa/router';
import { Readable } from 'node:stream';
import { apiError, validationError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { RouteDef } from '../lib/route.js';
import type { Clock } from '../lib/time.js';
import type { Logger } from '../log/logger.js';
import type { Principal } from '../modules/account/keys/principal.js';
import { readJsonBody } from './middleware/body.js';
import { RateLimiter } from '../lib/rate-limiter.js';
import { errorHandler } from './errors.js';
import { ROUTES } from './routes.js';
import type { Services } from './services.js';
import { validateBody, validateQuery } from '../lib/validate.js';
import { httpRequests } from '../log/metrics.js';
import { authenticateGuarded } from '../modules/account/keys/guarded-auth.js';
import { servedRoutes } from './edge-routes.js';
import { OPENAPI_PATH } from './openapi.js';
import { isResendPath, RESEND_PREFIX } from '../modules/compat/resend/resend-errors.js';

export interface ApiApp {
  koa: Koa;
  rateLimiter: RateLimiter;
  /** what the router serves, `GET /v1/emails/:id` style (the OpenAPI guardrail compares it with the document) */
  registered: string[];
}

/** The edge's slice of the config, and what it logs and times with. */
export interface EdgeSettings {
  /** limits.requests_per_second, per API key */
  requestsPerSecond: number;
  logger: Logger;
  clock: Clock;
  /** the package's version, for the OpenAPI document */
  version: string;
  /** http.public_url: the OpenAPI document's server */
  publicUrl: string | null;
  /** /metrics on this listener (false when metrics.port gives it one of its own) */
  metrics: boolean;
}

/** `pages`: middleware that answers paths of its own before the API's routing (the dashboard). */
export function buildApp(
  services: Services,
  edge: EdgeSettings,
  routes: readonly RouteDef<Services>[] = ROUTES,
  pages: Middleware[] = [],
): ApiApp {
  const koa = new Koa({ proxy: false });
  koa.on('error', afterResponseStarted(edge.logger));
  routes = servedRoutes(routes, edge);
  const rateLimiter = new RateLimiter(edge.requestsPerSecond, edge.clock);
  koa.use(requestId);
  koa.use(resendSlashes);
  koa.use(requestLog(edge.logger, services.logs));
  koa.use(requestMetrics);
  koa.use(errorHandler(edge.logger));
  for (const m of pages) koa.use(m);
  koa.use(unknownRoute);
  // Every /v1 request is authenticated before routing, so that a caller
  // without a valid key learns nothing, not even which routes exist.
  koa.use(authenticateApi(services, rateLimiter));

  // Case-sensitive, as URL paths are, and as the /v1 authentication check above is: a router that
  // matched /V1/… would reach a handler whose request was never authenticated.
  const router = new Router({ sensitive: true });
  // A route's schemas are compiled at its first request (lib/validate.ts), not here: compiling them
  // all was half a second of each start on a slow machine, for routes most starts never see;
  // test/unit/route-schemas.test.ts compiles every one, so that a bad schema fails the tests.
  for (const r of routes) {
    router.register(r.path, [r.method], [handle(services, r)], { name: `${r.method} ${r.path}` });
  }
  koa.use(router.routes());
  koa.use(router.allowedMethods());
  const registered = router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${layer.path}`),
  );
  return { koa, rateLimiter, registered };
}

/**
 * What Koa reports once an answer has started, where the error handler can
 * no longer answer: a streamed body cut short. A client that leaves in the
 * middle of a stream (`posthorn listen` stopped) is how such a stream ends,
 * not a fault; anything else is logged (Koa's default printed it to stderr).
 */
function afterResponseStarted(logger: Logger) {
  const clientGone = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);
  return (err: Error & { code?: string }, ctx?: Context) => {
    if (err.code && clientGone.has(err.code)) return;
    logger.error(
      { err, request_id: ctx?.state.requestId as string | undefined },
      'a response failed after it had started',
    );
  };
}

/**
 * Nothing answered: no route has this path, or (the router's allowedMethods
 * set 405 or 501 and Allow) the path exists with other methods. Both are 404
 * `not_found`: every error uses a code of interface §7, which has none for a
 * wrong method; the Allow header still lists the methods the path has.
 */
async function unknownRoute(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.body != null) return;
  if (ctx.status === 404) throw apiError('not_found', 'no such route');
  if (ctx.status === 405 || ctx.status === 501) {
    const allow = ctx.response.get('Allow');
    throw apiError(
      'not_found',
      `no route for ${ctx.method} ${ctx.path}; its methods: ${allow || 'none'}`,
      allow ? { Allow: allow } : undefined,
    );
  }
}

/**
 * Resend's SDK joins its base URL and each path as strings: a base URL given with a trailing slash
 * asks for /resend//emails. The Resend-compatible surface takes it as /resend/emails.
 */
async function resendSlashes(ctx: Context, next: Next): Promise<void> {
  if (ctx.path.startsWith(`${RESEND_PREFIX}//`)) ctx.path = ctx.path.replace(/\/{2,}/g, '/');
  await next();
}

/** Counted by route template (the path with `:id`), never by path: no ids or addresses in labels. */
async function requestMetrics(ctx: Context, next: Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    httpRequests.observe(ctx.method, route, ctx.status, (performance.now() - started) / 1000);
  }
}

async function requestId(ctx: Context, next: Next): Promise<void> {
  const id = newId('request');
  ctx.state.requestId = id;
  ctx.set('Request-Id', id);
  await next();
}

/**
 * One JSON line per request, and for a request made with a key a line of the
 * project's GET /v1/logs: never the key, the query string or a body. A
 * streamed answer (GET /v1/webhooks/{id}/listen) is written out after the
 * middleware has returned: its line waits until the connection closes, with
 * the duration of the whole stream.
 */
function requestLog(logger: Logger, logs: Services['logs']) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (ctx.body instanceof Readable && !ctx.res.writableFinished)
        ctx.res.once('close', () => logRequest(ctx, started, logger, logs));
      else logRequest(ctx, started, logger, logs);
    }
  };
}

function logRequest(ctx: Context, started: number, logger: Logger, logs: Services['logs']): void {
  const principal = ctx.state.principal as Principal | undefined;
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  const requestId = ctx.state.requestId as string;
  logger.info(
    {
      request_id: requestId,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      duration_ms: durationMs,
      key_id: principal?.key.id,
      project_id: principal?.project.id,
    },
    'request',
  );
  if (principal)
    logs.record({
      projectId: principal.project.id,
      keyId: principal.key.id,
      requestId,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      durationMs,
    });
}

/**
 * interface §5: a missing, malformed, unknown or revoked key is 401; a
 * suspended project is 403 on every call; then the per-key rate limit.
 * A request without an Authorization header guesses nothing: it is 401
 * and counts against no one.
 */
function authenticateApi(services: Services, limiter: RateLimiter) {
  return async (ctx: Context, next: Next) => {
    const keyed = ctx.path === '/v1' || ctx.path.startsWith('/v1/') || isResendPath(ctx.path);
    if (!keyed || ctx.path === OPENAPI_PATH) {
      await next();
      return;
    }
    const header = ctx.get('authorization');
    if (!header) throw apiError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
    const principal = await presentedKey(services, ctx.ip, /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]);
    ctx.state.principal = principal;
    if (principal.project.suspended) throw apiError('account_suspended', 'this project is suspended');
    const wait = limiter.take(principal.key.id);
    if (wait !== null)
      throw apiError('rate_limited', `too many requests: retry in ${wait} s`, { 'Retry-After': String(wait) });
    await next();
  };
}

/**
 * A key presented (`undefined`: an Authorization header that is no bearer)
 * from client address `ip` (the socket's: Koa trusts no X-Forwarded-For
 * here). While the address is over limits.auth_failures_per_ip it is
 * refused before the key is looked up, unless this process has seen the key
 * succeed; a wrong key counts against the address (lib/auth-throttle.ts).
 */
async function presentedKey(services: Services, ip: string, bearer: string | undefined): Promise<Principal> {
  const got = await authenticateGuarded(services.auth, services.authThrottle, ip, bearer, 'api');
  if (got.kind === 'principal') return got.principal;
  if (got.kind === 'refused')
    throw apiError('rate_limited', `too many failed authentications from this address: retry in ${got.retryAfterS} s`, {
      'Retry-After': String(got.retryAfterS),
    });
  throw apiError('unauthorized', 'invalid or revoked API key');
}

function handle(services: Services, r: RouteDef<Services>) {
  return async (ctx: Context) => {
    const principal = (ctx.state.principal as Principal | undefined) ?? null;
    authorize(r, principal);
    const query = r.query ? validateQuery(r.query, { ...ctx.query }) : undefined;
    let body: unknown;
    let rawBody: Buffer | null = null;
    if (r.body) {
      const parsed = await readJsonBody(ctx.req);
      rawBody = parsed.raw;
      body = validateBody(r.body, parsed.value === undefined ? {} : parsed.value);
    } else if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      refuseBody((await readJsonBody(ctx.req)).value);
    }
    const result = await r.handler({
      services,
      principal,
      params: ctx.params as Record<string, string>,
      body,
      query,
      rawBody,
      requestId: ctx.state.requestId as string,
      header: (name) => ctx.get(name) || undefined,
    });
    ctx.status = result.status;
    if (result.headers) ctx.set(result.headers);
    ctx.body = result.body;
  };
}

/** The route's scope check, for the edge and for in-process callers (route-caller.ts). */
export function authorize(r: RouteDef, principal: Principal | null): void {
  if (r.scope === null) return;
  // a route with a scope is under /v1, which authenticateApi covered; refuse rather than run without a key
  if (!principal) throw apiError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
  if (!(principal.key.scopes as readonly string[]).includes(r.scope))
    throw apiError('forbidden', `this key lacks the ${r.scope} scope`);
}

/** interface §7: unknown fields are refused, also by a request that takes no body (an empty `{}` is fine). */
function refuseBody(value: unknown): void {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw validationError('body', 'this request takes no body');
  const first = Object.keys(value)[0];
  if (first !== undefined) throw validationError(first, 'is not a known field (this request takes no body)');
}
