import { keyedRoutes } from '../../account/keys/principal.js';
import { presentSuppression } from './suppressions.presenter.js';
import { AddSuppressionBody, ListSuppressionsQuery } from './suppressions.schema.js';
import type { SuppressionService } from './suppressions.service.js';
import { listBody } from '../../../lib/page.js';

const route = keyedRoutes<{ suppressions: SuppressionService }>();

// CONTRACT §5 "Suppressions"; scope suppressions:manage everywhere
export const suppressionRoutes = [
  route({
    method: 'GET',
    path: '/v1/suppressions',
    scope: 'suppressions:manage',
    summary: 'List suppressed addresses, newest first',
    query: ListSuppressionsQuery,
    async handler({ services, principal, query }) {
      const page = await services.suppressions.list(principal.project.id, {
        limit: query.limit,
        cursor: query.cursor,
        reason: query.reason,
        contains: query.email,
      });
      return { status: 200, body: listBody(page, presentSuppression) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/suppressions',
    scope: 'suppressions:manage',
    summary: 'Suppress an address: nothing more is sent to it (201; 200 when it already was, with its first reason)',
    body: AddSuppressionBody,
    async handler({ services, principal, body }) {
      const { suppression, created } = await services.suppressions.add(
        principal.project.id,
        body.email,
        body.reason,
        body.expires_at === undefined ? null : Date.parse(body.expires_at),
      );
      return { status: created ? 201 : 200, body: presentSuppression(suppression) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/suppressions/:email',
    scope: 'suppressions:manage',
    summary: 'Take an address off the suppression list',
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: {
          ...presentSuppression(await services.suppressions.remove(principal.project.id, params.email)),
          deleted: true,
        },
      };
    },
  }),
];
