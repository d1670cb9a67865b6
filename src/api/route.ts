import type { TSchema } from '@sinclair/typebox';
import type { Scope } from '../modules/keys/scopes.js';
import type { Principal } from '../modules/keys/keys.service.js';
import type { ApiDeps } from './deps.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteContext<Body = unknown, Query = unknown> {
  deps: ApiDeps;
  principal: Principal;
  params: Record<string, string>;
  body: Body;
  query: Query;
  /** the request's bytes as received, e.g. to compare an idempotent retry */
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
 * One API route: everything the edge needs to authenticate, authorize,
 * validate and document it. Routes parse → authorize → call a service →
 * present; they never touch Koa or SQL.
 */
export interface RouteDef {
  method: HttpMethod;
  /** @koa/router path, e.g. /v1/emails/:id */
  path: string;
  /** required scope (interface §5) */
  scope: Scope;
  summary: string;
  body?: TSchema;
  query?: TSchema;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler(ctx: RouteContext<any, any>): Promise<RouteResult>;
}

/** Typed route helper: the handler sees the static types of its schemas. */
export function route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(
  def: Omit<RouteDef, 'body' | 'query' | 'handler'> & {
    body?: B;
    query?: Q;
    handler(ctx: RouteContext<B extends TSchema ? import('@sinclair/typebox').Static<B> : undefined, Q extends TSchema ? import('@sinclair/typebox').Static<Q> : undefined>): Promise<RouteResult>;
  },
): RouteDef {
  return def as RouteDef;
}
