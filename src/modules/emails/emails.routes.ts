import { route, type RouteDef } from '../../api/route.js';
import { notFound } from '../../lib/errors.js';
import { presentEmail } from './emails.presenter.js';
import { findEmail, listEmails } from './emails.repo.js';
import { ListEmailsQuery } from './emails.schema.js';

export const emailRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/v1/emails',
    scope: 'emails:read',
    summary: 'List emails, newest first',
    query: ListEmailsQuery,
    async handler({ deps, principal, query }) {
      const { emails, more } = await listEmails(deps.store.reader, principal.project.id, {
        limit: query.limit,
        before: query.cursor,
        status: query.status,
        to: query.to?.trim().toLowerCase(),
      });
      return {
        status: 200,
        body: { object: 'list', data: emails.map(presentEmail), next_cursor: more ? emails[emails.length - 1]!.id : null },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/emails/:id',
    scope: 'emails:read',
    summary: 'Get an email with its per-recipient status',
    async handler({ deps, principal, params }) {
      const email = await findEmail(deps.store.reader, principal.project.id, params.id!);
      if (!email) throw notFound(`email ${params.id}`);
      return { status: 200, body: presentEmail(email) };
    },
  }),
];
