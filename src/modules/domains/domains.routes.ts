import { route, type RouteDef, type RouteContext } from '../../api/route.js';
import { presentDomain } from './domains.presenter.js';
import type { Domain } from './domains.repo.js';
import { CreateDomainBody, InsightsQuery, UpdateDomainBody } from './domains.schema.js';
import { createDomain, deleteDomain, domainInsights, getDomain, listDomains, recordsOf, updateDomain, verifyDomain } from './domains.service.js';

async function present({ deps }: RouteContext, d: Domain) {
  return presentDomain(d, await recordsOf(deps, d), deps.domains.trackingAvailable);
}

// interface §4.2, scope domains:manage on every route
export const domainRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/v1/domains',
    scope: 'domains:manage',
    summary: 'Add a sending domain; answers the DNS records to publish',
    body: CreateDomainBody,
    async handler(ctx) {
      const d = await createDomain(ctx.deps, ctx.principal.project, ctx.body);
      return { status: 201, body: await present(ctx, d) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains',
    scope: 'domains:manage',
    summary: 'List sending domains',
    async handler(ctx) {
      const list = await listDomains(ctx.deps, ctx.principal.project.id);
      return { status: 200, body: { object: 'list', data: await Promise.all(list.map((d) => present(ctx, d))) } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Get a domain with its records and last check results',
    async handler(ctx) {
      return { status: 200, body: await present(ctx, await getDomain(ctx.deps, ctx.principal.project.id, ctx.params.id!)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Change tracking, TLS mode or the custom return path',
    body: UpdateDomainBody,
    async handler(ctx) {
      const d = await updateDomain(ctx.deps, ctx.principal.project.id, ctx.params.id!, ctx.body);
      return { status: 200, body: await present(ctx, d) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Remove a domain; live sends from it stop at once',
    async handler(ctx) {
      const d = await deleteDomain(ctx.deps, ctx.principal.project.id, ctx.params.id!);
      return { status: 200, body: { id: d.id, object: 'domain', domain: d.name, deleted: true } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/domains/:id/verify',
    scope: 'domains:manage',
    summary: 'Check the DNS records now',
    async handler(ctx) {
      const d = await getDomain(ctx.deps, ctx.principal.project.id, ctx.params.id!);
      return { status: 200, body: await present(ctx, await verifyDomain(ctx.deps, d)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains/:id/insights',
    scope: 'domains:manage',
    summary: 'Delivery health of the domain over the last days',
    query: InsightsQuery,
    async handler(ctx) {
      const d = await getDomain(ctx.deps, ctx.principal.project.id, ctx.params.id!);
      return { status: 200, body: await domainInsights(ctx.deps, d, ctx.query.days) };
    },
  }),
];
