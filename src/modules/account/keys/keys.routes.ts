import { presentKey, presentNewKey } from './keys.presenter.js';
import { CreateKeyBody, UpdateKeyBody } from './keys.schema.js';
import type { KeyService } from './keys.service.js';
import { keyedRoutes } from './principal.js';

const route = keyedRoutes<{ keys: KeyService }>();

// CONTRACT §5 "API keys". A key creates keys only within what it holds.
export const keyRoutes = [
  route({
    method: 'GET',
    path: '/v1/api-keys',
    scope: 'keys:manage',
    summary: "List the project's API keys (never their secrets)",
    async handler({ services, principal }) {
      const keys = await services.keys.list(principal.project.id);
      return { status: 200, body: { object: 'list', data: keys.map(presentKey) } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/api-keys',
    scope: 'keys:manage',
    summary: 'Create an API key; the key is shown in this answer only',
    body: CreateKeyBody,
    async handler({ services, principal, body }) {
      const { key, secret } = await services.keys.create({
        projectId: principal.project.id,
        mode: body.mode ?? principal.key.mode,
        scopes: body.scopes,
        name: body.name,
        grantor: principal.key,
        domainId: body.domain_id,
      });
      return { status: 201, body: presentNewKey(key, secret) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/api-keys/:id',
    scope: 'keys:manage',
    summary: 'Rename an API key',
    body: UpdateKeyBody,
    async handler({ services, principal, params, body }) {
      return { status: 200, body: presentKey(await services.keys.rename(params.id, principal.project.id, body.name)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/api-keys/:id',
    scope: 'keys:manage',
    summary: 'Revoke an API key',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentKey(await services.keys.revoke(params.id, principal.project.id)) };
    },
  }),
];
