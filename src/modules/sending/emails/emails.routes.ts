import { iso } from '../../../lib/time.js';
import { parseAddress } from '../../../lib/address.js';
import { validationError } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentEmail, presentEmailContent, presentEmailEvent } from './emails.presenter.js';
import type { WebhookService } from '../../notifying/webhooks/webhooks.service.js';
import { ListEmailsQuery, RescheduleBody, SendBatchBody, SendEmailBody } from './emails.schema.js';
import type { EmailService } from './emails.service.js';
import { listBody } from '../../../lib/page.js';

const route = keyedRoutes<{ emails: EmailService; webhooks: Pick<WebhookService, 'deliveriesOfEvents'> }>();

// interface §4.1
export const emailRoutes = [
  route({
    method: 'POST',
    path: '/v1/emails',
    scope: 'emails:send',
    summary: 'Queue an email; 202 means it is durably stored',
    body: SendEmailBody,
    async handler(ctx) {
      const { services, principal, body, requestId } = ctx;
      const sent = await services.emails.send(principal, body, requestId, ctx.header('idempotency-key'));
      // a retry with the same Idempotency-Key gets the answer the first request got
      return sent.replay
        ? { status: sent.replay.status, body: sent.replay.body }
        : { status: 202, body: presentEmail(sent.email) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/emails/batch',
    scope: 'emails:send',
    summary:
      'Queue up to 100 emails at once (no attachments): all or none, in one durable commit, under one Idempotency-Key',
    body: SendBatchBody,
    async handler(ctx) {
      const { services, principal, body, requestId } = ctx;
      const sent = await services.emails.sendBatch(principal, body, requestId, ctx.header('idempotency-key'));
      if (sent.replay) return { status: sent.replay.status, body: sent.replay.body };
      return { status: 202, body: { object: 'list', data: (sent.batch ?? [sent.email]).map(presentEmail) } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/emails',
    scope: 'emails:read',
    summary: 'List emails, newest first',
    query: ListEmailsQuery,
    async handler({ services, principal, query }) {
      const page = await services.emails.list(principal.project.id, {
        limit: query.limit,
        before: query.cursor,
        status: query.status,
        recipientStatus: query.recipient_status,
        to: query.to === undefined ? undefined : recipientFilter(query.to),
        tag:
          query.tag === undefined
            ? undefined
            : { name: query.tag.slice(0, query.tag.indexOf(':')), value: query.tag.slice(query.tag.indexOf(':') + 1) },
        createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
        createdBefore: query.created_before === undefined ? undefined : Date.parse(query.created_before),
      });
      return { status: 200, body: listBody(page, presentEmail) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/emails/:id',
    scope: 'emails:read',
    summary: 'Get an email with its per-recipient status',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentEmail(await services.emails.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/emails/:id/content',
    scope: 'emails:read',
    summary: 'Get what an email says: its subject, HTML and text as rendered',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentEmailContent(await services.emails.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/emails/:id/events',
    scope: 'emails:read',
    summary: "Get an email's events, oldest first, with the webhook deliveries made of each",
    async handler({ services, principal, params }) {
      const projectId = principal.project.id;
      const events = await services.emails.events(projectId, params.id);
      const deliveries = await services.webhooks.deliveriesOfEvents(
        projectId,
        events.map((e) => e.id),
      );
      const byEvent = new Map<string, typeof deliveries>();
      for (const d of deliveries) byEvent.set(d.eventId, [...(byEvent.get(d.eventId) ?? []), d]);
      return {
        status: 200,
        body: {
          object: 'list',
          data: events.map((e) => presentEmailEvent(e, byEvent.get(e.id) ?? [])),
          next_cursor: null,
        },
      };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/emails/:id',
    scope: 'emails:send',
    summary: 'Reschedule an email that is still waiting',
    body: RescheduleBody,
    async handler({ services, principal, params, body }) {
      const e = await services.emails.reschedule(principal.project.id, params.id, body.scheduled_at);
      return { status: 200, body: { id: e.id, status: e.status, scheduled_at: iso(e.scheduledAt) } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/emails/:id/cancel',
    scope: 'emails:send',
    summary: 'Cancel an email that is scheduled, or queued and not yet attempted: none of its recipients gets it',
    async handler({ services, principal, params }) {
      const e = await services.emails.cancel(principal.project.id, params.id);
      return { status: 200, body: presentEmail(e) };
    },
  }),
];

/** `to` is matched as recipients are stored: the bare address, lower-cased, its domain as an A-label. */
function recipientFilter(value: string): string {
  const r = parseAddress(value);
  if (!r.ok) throw validationError('to', r.reason);
  return r.value.address.toLowerCase();
}
