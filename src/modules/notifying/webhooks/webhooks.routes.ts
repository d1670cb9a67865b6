import { iso } from '../../../lib/time.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentDelivery, presentEndpoint, presentNewSecret } from './webhooks.presenter.js';
import {
  CreateWebhookBody,
  DeliveryLogQuery,
  ListenBody,
  ReplayBody,
  TestEventBody,
  UpdateWebhookBody,
} from './webhooks.schema.js';
import type { WebhookService } from './webhooks.service.js';
import { listBody } from '../../../lib/page.js';

const route = keyedRoutes<{ webhooks: WebhookService }>();

// interface §4.5 and CONTRACT §5; scope webhooks:manage everywhere
export const webhookRoutes = [
  route({
    method: 'POST',
    path: '/v1/webhooks',
    scope: 'webhooks:manage',
    summary: 'Create an endpoint; the signing secret is shown in this answer only',
    body: CreateWebhookBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentNewSecret(await services.webhooks.create(principal.project.id, body)) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/webhooks/listen',
    scope: 'webhooks:manage',
    summary:
      'Create a temporary endpoint for `posthorn listen`: its deliveries go down GET /v1/webhooks/{id}/listen, and it is deleted when that stream closes; the signing secret is shown in this answer only',
    body: ListenBody,
    async handler({ services, principal, body }) {
      return {
        status: 201,
        body: presentNewSecret(await services.webhooks.createListener(principal.project.id, body)),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/webhooks/:id/listen',
    scope: 'webhooks:manage',
    summary:
      'The deliveries of a `posthorn listen` endpoint as they are made: text/event-stream, one `data:` line per delivery, JSON `{headers, body}` as an HTTPS delivery carries them, a comment every 15 s; one stream per endpoint; when it closes the endpoint is deleted',
    async handler({ services, principal, params }) {
      const stream = await services.webhooks.listen(principal.project.id, params.id, principal.key.id);
      // no-store: nothing between here and the client keeps it; X-Accel-Buffering: nginx passes each line on at once
      return {
        status: 200,
        headers: {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-store',
          'X-Accel-Buffering': 'no',
        },
        body: stream,
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/webhooks',
    scope: 'webhooks:manage',
    summary: 'List endpoints',
    async handler({ services, principal }) {
      return {
        status: 200,
        body: { object: 'list', data: (await services.webhooks.list(principal.project.id)).map(presentEndpoint) },
      };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/webhooks/:id',
    scope: 'webhooks:manage',
    summary: 'Get an endpoint (never its secret)',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentEndpoint(await services.webhooks.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/webhooks/:id',
    scope: 'webhooks:manage',
    summary: 'Change the URL, events, description, signature or payload format, or pause it',
    body: UpdateWebhookBody,
    async handler({ services, principal, params, body }) {
      return {
        status: 200,
        body: presentEndpoint(await services.webhooks.update(principal.project.id, params.id, body)),
      };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    scope: 'webhooks:manage',
    summary: 'Delete an endpoint; nothing more is sent to it, pending deliveries included',
    async handler({ services, principal, params }) {
      const e = await services.webhooks.delete(principal.project.id, params.id);
      return { status: 200, body: { id: e.id, object: 'webhook_endpoint', deleted: true } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/webhooks/:id/rotate-secret',
    scope: 'webhooks:manage',
    summary: 'Replace the signing secret; the old one keeps signing for 24 hours',
    async handler({ services, principal, params }) {
      const e = await services.webhooks.rotateSecret(principal.project.id, params.id);
      return { status: 200, body: { ...presentNewSecret(e), previous_secret_expires_at: iso(e.previousSecretUntil) } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/webhooks/:id/deliveries',
    scope: 'webhooks:manage',
    summary: 'The delivery log of an endpoint: attempts, status codes, response times, errors',
    query: DeliveryLogQuery,
    async handler({ services, principal, params, query }) {
      const { page, attempts } = await services.webhooks.deliveryLog(
        principal.project.id,
        params.id,
        query.limit,
        query.cursor,
      );
      return { status: 200, body: listBody(page, (d) => presentDelivery(d, attempts.get(d.id) ?? [])) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/webhooks/:id/replay',
    scope: 'webhooks:manage',
    summary: 'Send one event to this endpoint again (same event id)',
    body: ReplayBody,
    async handler({ services, principal, params, body }) {
      const d = await services.webhooks.replay(principal.project.id, params.id, body.event_id);
      return { status: 202, body: presentDelivery(d, []) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/webhooks/:id/test',
    scope: 'webhooks:manage',
    summary:
      'Send this endpoint a test event of an email type: sample data about no stored email, `simulated: true`, to this endpoint only',
    body: TestEventBody,
    async handler({ services, principal, params, body }) {
      const d = await services.webhooks.sendTest(principal.project.id, params.id, body.type);
      return { status: 202, body: presentDelivery(d, []) };
    },
  }),
];
