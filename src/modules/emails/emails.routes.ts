import { route, type RouteDef } from '../../api/route.js';
import { iso } from '../../lib/time.js';
import { parseAddress } from '../../lib/address.js';
import { validationError } from '../../lib/errors.js';
import { presentEmail } from './emails.presenter.js';
import { listEmails } from './emails.repo.js';
import { ListEmailsQuery, RescheduleBody, SendEmailBody } from './emails.schema.js';
import { getEmail, rescheduleEmail, sendEmail } from './emails.service.js';

// interface §4.1
export const emailRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/v1/emails',
    scope: 'emails:send',
    summary: 'Queue an email; 202 means it is durably stored',
    body: SendEmailBody,
    async handler({ deps, principal, body, requestId, header }) {
      return sendEmail(deps.emails, principal, body, requestId, header('idempotency-key'));
    },
  }),
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
        to: query.to === undefined ? undefined : recipientFilter(query.to),
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
      return { status: 200, body: presentEmail(await getEmail(deps, principal.project.id, params.id!)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/emails/:id',
    scope: 'emails:send',
    summary: 'Reschedule an email that is still waiting',
    body: RescheduleBody,
    async handler({ deps, principal, params, body }) {
      const e = await rescheduleEmail(deps, principal.project.id, params.id!, body.scheduled_at);
      return { status: 200, body: { id: e.id, status: e.status, scheduled_at: iso(e.scheduledAt) } };
    },
  }),
];

/** `to` is matched as recipients are stored: the bare address, lower-cased, its domain as an A-label. */
function recipientFilter(value: string): string {
  const r = parseAddress(value);
  if (!r.ok) throw validationError('to', r.reason);
  return r.value.address.toLowerCase();
}
