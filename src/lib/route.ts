import type { Static, TSchema } from '@sinclair/typebox';

// The route contract (STYLE 1, 9): what a module declares about each of its
// routes, and what its handler gets. Modules import this, never the Koa edge
// (api/), which registers every route of the one list (api/routes.ts).

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteContext<Services, Caller, Body = unknown, Query = unknown> {
  /** the module services the handler calls; never the store */
  services: Services;
  /** the authenticated key and its project (null on a public route) */
  principal: Caller;
  params: Record<string, string>;
  body: Body;
  query: Query;
  /** the request's bytes as received */
  rawBody: Buffer | null;
  requestId: string;
  header(name: string): string | undefined;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * One route: everything the edge needs to authenticate, authorize, validate
 * and document it. Handlers parse → call a service → present; they never
 * touch Koa or SQL.
 */
export interface RouteDef<Services = unknown, Caller = unknown> {
  method: HttpMethod;
  /** @koa/router path, e.g. /v1/emails/:id */
  path: string;
  /** the scope a key needs (interface §5); null for a public route, which takes no key (health, tracking) */
  scope: string | null;
  summary: string;
  body?: TSchema;
  query?: TSchema;
  /**
   * A method, so its parameter is checked both ways: a route typed for its
   * own body and query (routesFor) stands in the one list, whose edge passes
   * what it validated against the route's schemas.
   */
  handler(ctx: RouteContext<Services, Caller>): Promise<RouteResult>;
}

type Of<S extends TSchema | undefined> = S extends TSchema ? Static<S> : undefined;

/**
 * The typed route helper of a module whose handlers use `Services`, called
 * by `Caller` with scopes named by `Scope`: the handler sees the static types
 * of its body and query schemas.
 */
export function routesFor<Services, Caller, Scope extends string | null>() {
  return <B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(
    def: Omit<RouteDef, 'scope' | 'body' | 'query' | 'handler'> & {
      scope: Scope;
      body?: B;
      query?: Q;
      handler(ctx: RouteContext<Services, Caller, Of<B>, Of<Q>>): Promise<RouteResult>;
    },
  ): RouteDef<Services, Caller> => def;
}
