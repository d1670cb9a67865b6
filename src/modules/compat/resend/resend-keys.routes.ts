import { keyedRoutes } from '../../account/keys/principal.js';
import type { KeyService } from '../../account/keys/keys.service.js';
import { pageOfAll, ResendAllQuery } from './resend-domains.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { fromResendKey, ResendCreateKeyBody, resendListedKey, ResendUpdateKeyBody } from './resend-keys.js';

const route = keyedRoutes<{ keys: KeyService }>();

// Resend's API keys routes (docs/resend.md), over the /v1 keys service; scope keys:manage. A key
// creates keys only within what it holds, as on /v1.
export const resendKeysRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/api-keys`,
    scope: 'keys:manage',
    summary:
      "Resend's create: a full_access or sending_access key, the latter maybe for one domain; answers {id, token}",
    body: ResendCreateKeyBody,
    async handler({ services, principal, body }) {
      const { key, secret } = await services.keys.create({
        projectId: principal.project.id,
        mode: principal.key.mode,
        grantor: principal.key,
        ...fromResendKey(body),
      });
      return { status: 200, body: { id: key.id, token: secret } };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/api-keys`,
    scope: 'keys:manage',
    summary: "Resend's list of the project's keys (never their secrets), newest first; revoked ones are gone",
    query: ResendAllQuery,
    async handler({ services, principal, query }) {
      const live = (await services.keys.list(principal.project.id)).filter((k) => k.revokedAt === null);
      return { status: 200, body: pageOfAll(live, query, resendListedKey) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/api-keys/:id`,
    scope: 'keys:manage',
    summary: "Resend's update: rename a key",
    body: ResendUpdateKeyBody,
    async handler({ services, principal, params, body }) {
      const k = await services.keys.rename(params.id, principal.project.id, body.name);
      return { status: 200, body: { object: 'api_key', id: k.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/api-keys/:id`,
    scope: 'keys:manage',
    summary: "Resend's remove: the key is revoked at once",
    async handler({ services, principal, params }) {
      const k = await services.keys.revoke(params.id, principal.project.id);
      return { status: 200, body: { object: 'api_key', id: k.id, deleted: true } };
    },
  }),
];
