import { keyedRoutes } from '../../account/keys/principal.js';
import type { DomainService } from '../../deliverability/domains/domains.service.js';
import {
  fromResendDomain,
  fromResendDomainPatch,
  pageOfAll,
  resendCreatedDomain,
  resendDomain,
  resendListedDomain,
  ResendAllQuery,
  ResendCreateDomainBody,
  ResendUpdateDomainBody,
} from './resend-domains.js';
import { RESEND_PREFIX } from './resend-errors.js';

const route = keyedRoutes<{ domains: DomainService }>();

// Resend's domains routes (docs/resend.md), over the /v1 domains service; scope domains:manage.
export const resendDomainsRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/domains`,
    scope: 'domains:manage',
    summary: "Resend's create: add a sending domain; answers it with the DNS records to publish",
    body: ResendCreateDomainBody,
    async handler({ services, principal, body }) {
      const d = await services.domains.create(principal.project, fromResendDomain(body));
      return { status: 200, body: resendCreatedDomain(await services.domains.describe(d)) };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/domains`,
    scope: 'domains:manage',
    summary: "Resend's list of domains, newest first; all of them unless `limit` is given",
    query: ResendAllQuery,
    async handler({ services, principal, query }) {
      const all = await services.domains.list(principal.project.id);
      return { status: 200, body: pageOfAll(all, query, resendListedDomain) };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/domains/:id`,
    scope: 'domains:manage',
    summary: "Resend's domain: its status and records",
    async handler({ services, principal, params }) {
      const d = await services.domains.get(principal.project.id, params.id);
      return { status: 200, body: resendDomain(await services.domains.describe(d)) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/domains/:id`,
    scope: 'domains:manage',
    summary: "Resend's update: open and click tracking, TLS mode",
    body: ResendUpdateDomainBody,
    async handler({ services, principal, params, body }) {
      const d = await services.domains.update(principal.project.id, params.id, fromResendDomainPatch(body));
      return { status: 200, body: { object: 'domain', id: d.id } };
    },
  }),
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/domains/:id/verify`,
    scope: 'domains:manage',
    summary: "Resend's verify: check the domain's DNS records now",
    async handler({ services, principal, params }) {
      const d = await services.domains.verify(await services.domains.get(principal.project.id, params.id));
      return { status: 200, body: { object: 'domain', id: d.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/domains/:id`,
    scope: 'domains:manage',
    summary: "Resend's remove: live sends from the domain stop at once",
    async handler({ services, principal, params }) {
      const d = await services.domains.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'domain', id: d.id, deleted: true } };
    },
  }),
];
