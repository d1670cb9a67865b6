import type { RouteDef } from '../lib/route.js';
import { OPENAPI_PATH, openApiDocument } from './openapi.js';
import type { Services } from './services.js';

/** What the edge's own routes depend on (a slice of EdgeSettings). */
export interface EdgeRouteSettings {
  version: string;
  publicUrl: string | null;
  metrics: boolean;
}

/**
 * The routes the app serves: the modules' routes and the edge's own, without
 * a key (CONTRACT §5): the OpenAPI document of all of them (itself
 * included), and /metrics when it is served on the API listener.
 */
export function servedRoutes(routes: readonly RouteDef<Services>[], edge: EdgeRouteSettings): RouteDef<Services>[] {
  const metrics: RouteDef<Services> = {
    method: 'GET',
    path: '/metrics',
    scope: null,
    summary: 'Prometheus metrics (text exposition format); no key',
    async handler({ services }) {
      const { contentType, text } = await services.metrics.scrape();
      return { status: 200, headers: { 'Content-Type': contentType }, body: text };
    },
  };
  let document: unknown = null;
  const openapi: RouteDef<Services> = {
    method: 'GET',
    path: OPENAPI_PATH,
    scope: null,
    summary: 'This API as an OpenAPI 3.1 document; no key',
    async handler() {
      document ??= openApiDocument(all, { version: edge.version, serverUrl: edge.publicUrl });
      return { status: 200, body: document };
    },
  };
  const all = [...routes, openapi, ...(edge.metrics ? [metrics] : [])];
  return all;
}
