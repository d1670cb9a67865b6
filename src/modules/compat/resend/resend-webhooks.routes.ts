import { keyedRoutes } from '../../account/keys/principal.js';
import { RESEND_COMPATIBLE, type WebhookService } from '../../notifying/webhooks/webhooks.service.js';
import { pageOfAll } from './resend-domains.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { ResendListQuery } from './resend-lists.js';
import {
  asEndpointError,
  eventsFromResend,
  fromResendWebhookPatch,
  ResendCreateWebhookBody,
  resendListedWebhook,
  ResendUpdateWebhookBody,
  resendWebhook,
} from './resend-webhooks.js';

const route = keyedRoutes<{ webhooks: WebhookService }>();

const endpointNamed = <T>(p: Promise<T>): Promise<T> =>
  p.catch((e: unknown) => {
    throw asEndpointError(e);
  });

// Resend's webhooks routes (docs/resend.md), over the /v1 webhooks service; scope webhooks:manage.
// An endpoint made here is signed and shaped as Resend's (RESEND_COMPATIBLE): Standard Webhooks
// headers under both their names and Svix's, Resend's event bodies.
export const resendWebhooksRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/webhooks`,
    scope: 'webhooks:manage',
    summary:
      "Resend's create: an endpoint for Resend's event names, signed as Resend signs; answers its signing_secret",
    body: ResendCreateWebhookBody,
    async handler({ services, principal, body }) {
      const events = eventsFromResend(body.events);
      const e = await endpointNamed(
        services.webhooks.create(principal.project.id, { url: body.endpoint, events, ...RESEND_COMPATIBLE }),
      );
      return { status: 200, body: { object: 'webhook', id: e.id, signing_secret: e.secret } };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/webhooks`,
    scope: 'webhooks:manage',
    summary: "Resend's list of webhooks, newest first (never their secrets)",
    query: ResendListQuery,
    async handler({ services, principal, query }) {
      const all = await services.webhooks.list(principal.project.id);
      return { status: 200, body: pageOfAll(all, query, resendListedWebhook) };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/webhooks/:id`,
    scope: 'webhooks:manage',
    summary: "Resend's webhook, with its signing secret as Resend shows it",
    async handler({ services, principal, params }) {
      return { status: 200, body: resendWebhook(await services.webhooks.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/webhooks/:id`,
    scope: 'webhooks:manage',
    summary: "Resend's update: endpoint, events, status enabled or disabled",
    body: ResendUpdateWebhookBody,
    async handler({ services, principal, params, body }) {
      const patch = fromResendWebhookPatch(body);
      const e = await endpointNamed(services.webhooks.update(principal.project.id, params.id, patch));
      return { status: 200, body: { object: 'webhook', id: e.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/webhooks/:id`,
    scope: 'webhooks:manage',
    summary: "Resend's remove: nothing more is sent to the endpoint, pending deliveries included",
    async handler({ services, principal, params }) {
      const e = await services.webhooks.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'webhook', id: e.id, deleted: true } };
    },
  }),
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/webhooks/:id/signing-secret/rotate`,
    scope: 'webhooks:manage',
    summary: "Resend's rotateSigningSecret: a new secret; the old one keeps signing for 24 hours",
    async handler({ services, principal, params }) {
      const e = await services.webhooks.rotateSecret(principal.project.id, params.id);
      return { status: 200, body: { object: 'webhook', id: e.id, signing_secret: e.secret } };
    },
  }),
];
