import { apiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { HttpMethod, RouteDef, RouteResult } from '../lib/route.js';
import { validateBody, validateQuery } from '../lib/validate.js';
import type { Principal } from '../modules/account/keys/principal.js';
import { authorize } from './app.js';
import { API_ROUTES } from './routes.js';
import type { Services } from './services.js';

export interface RouteCall {
  query?: Record<string, string>;
  body?: unknown;
}

export type RouteCaller = (
  principal: Principal,
  method: HttpMethod,
  path: string,
  call?: RouteCall,
) => Promise<RouteResult>;

/**
 * The /v1 routes called in process, as the dashboard calls them: the same
 * scope check, validation and handler as a request over HTTP, so that a
 * page can show only what its key may see. A refusal is thrown as the
 * ApiError the API would have answered.
 */
export function routeCaller(
  services: Services,
  routes: readonly RouteDef<Services, Principal>[] = API_ROUTES,
): RouteCaller {
  const table = routes.map((r) => ({ r, pattern: pathPattern(r.path) }));
  return async (principal, method, path, call = {}) => {
    let found: { r: RouteDef<Services, Principal>; params: Record<string, string> } | null = null;
    for (const { r, pattern } of table) {
      const m = r.method === method ? pattern.exec(path) : null;
      if (m)
        found = { r, params: Object.fromEntries(Object.entries(m.groups ?? {}).map(([k, v]) => [k, decodeParam(v)])) };
      if (found) break;
    }
    if (!found) throw apiError('not_found', 'no such route');
    const { r, params } = found;
    if (principal.project.suspended) throw apiError('account_suspended', 'this project is suspended');
    authorize(r, principal);
    const query = r.query ? validateQuery(r.query, { ...call.query }) : undefined;
    const body = r.body ? validateBody(r.body, call.body ?? {}) : undefined;
    return r.handler({
      services,
      principal,
      params,
      body,
      query,
      rawBody: r.body ? Buffer.from(JSON.stringify(call.body ?? {})) : null,
      requestId: newId('request'),
      header: () => undefined,
    });
  };
}

/** A path parameter as the router gives it; one that is not valid percent-encoding names nothing. */
function decodeParam(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    throw apiError('not_found', 'no such resource');
  }
}

/** `/v1/emails/:id` → a pattern whose named groups are the params. */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => (part.startsWith(':') ? `(?<${part.slice(1)}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${source.join('/')}$`);
}
