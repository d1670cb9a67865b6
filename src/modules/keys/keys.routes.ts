import { route, type RouteDef } from '../../api/route.js';
import { presentKey, presentNewKey } from './keys.presenter.js';
import { CreateKeyBody } from './keys.schema.js';
import { createKey, listKeys, revokeKey } from './keys.service.js';

// CONTRACT §5 "API keys". A key creates keys only within what it holds.
export const keyRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/v1/api-keys',
    scope: 'keys:manage',
    summary: 'List the project\'s API keys (never their secrets)',
    async handler({ deps, principal }) {
      const keys = await listKeys(deps, principal.project.id);
      return { status: 200, body: { object: 'list', data: keys.map(presentKey) } };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/api-keys',
    scope: 'keys:manage',
    summary: 'Create an API key; the key is shown in this answer only',
    body: CreateKeyBody,
    async handler({ deps, principal, body }) {
      const { key, secret } = await createKey(deps, {
        projectId: principal.project.id,
        mode: body.mode ?? principal.key.mode,
        scopes: body.scopes,
        name: body.name,
        grantor: principal.key,
      });
      return { status: 201, body: presentNewKey(key, secret) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/api-keys/:id',
    scope: 'keys:manage',
    summary: 'Revoke an API key',
    async handler({ deps, principal, params }) {
      const key = await revokeKey(deps, params.id!, principal.project.id);
      deps.auth.invalidate();
      return { status: 200, body: presentKey(key) };
    },
  }),
];
