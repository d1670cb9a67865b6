import { keyedRoutes } from '../../account/keys/principal.js';
import { CreateDomainBody, InsightsQuery, UpdateDomainBody } from './domains.schema.js';
import type { DomainService } from './domains.service.js';
import { presentDeletedDomain, presentDomain, presentDomainDmarc } from './domains.presenter.js';

const route = keyedRoutes<{ domains: DomainService }>();

// interface §4.2, scope domains:manage on every route
export const domainRoutes = [
  route({
    method: 'POST',
    path: '/v1/domains',
    scope: 'domains:manage',
    summary: 'Add a sending domain; answers the DNS records to publish',
    body: CreateDomainBody,
    async handler({ services, principal, body }) {
      return {
        status: 201,
        body: presentDomain(await services.domains.describe(await services.domains.create(principal.project, body))),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains',
    scope: 'domains:manage',
    summary: 'List sending domains',
    async handler({ services, principal }) {
      const list = await services.domains.list(principal.project.id);
      return {
        status: 200,
        body: {
          object: 'list',
          data: await Promise.all(list.map(async (d) => presentDomain(await services.domains.describe(d)))),
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Get a domain with its records and last check results',
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: presentDomain(
          await services.domains.describe(await services.domains.get(principal.project.id, params.id)),
        ),
      };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Change tracking, TLS mode or the custom return path',
    body: UpdateDomainBody,
    async handler({ services, principal, params, body }) {
      return {
        status: 200,
        body: presentDomain(
          await services.domains.describe(await services.domains.update(principal.project.id, params.id, body)),
        ),
      };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/domains/:id',
    scope: 'domains:manage',
    summary: 'Remove a domain; live sends from it stop at once',
    async handler({ services, principal, params }) {
      const d = await services.domains.delete(principal.project.id, params.id);
      return { status: 200, body: presentDeletedDomain(d) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/domains/:id/verify',
    scope: 'domains:manage',
    summary: 'Check the DNS records now',
    async handler({ services, principal, params }) {
      const d = await services.domains.get(principal.project.id, params.id);
      return { status: 200, body: presentDomain(await services.domains.describe(await services.domains.verify(d))) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains/:id/insights',
    scope: 'domains:manage',
    summary: 'Delivery health of the domain over the last days',
    query: InsightsQuery,
    async handler({ services, principal, params, query }) {
      const d = await services.domains.get(principal.project.id, params.id);
      return { status: 200, body: await services.domains.insights(d, query.days) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/domains/:id/dmarc',
    scope: 'domains:manage',
    summary:
      "What receivers' DMARC aggregate reports of the last days say of the domain: totals, aligned DKIM and SPF pass rates, per reporter and per source IP, and the sources that send as the domain but are not this appliance",
    query: InsightsQuery,
    async handler({ services, principal, params, query }) {
      const d = await services.domains.get(principal.project.id, params.id);
      return { status: 200, body: presentDomainDmarc(await services.domains.dmarc(d, query.days)) };
    },
  }),
];
