import { listBody } from '../../../lib/page.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentBroadcast, presentDeletedBroadcast } from './broadcasts.presenter.js';
import type { BroadcastService } from './broadcasts.service.js';
import {
  CreateBroadcastBody,
  ListBroadcastsQuery,
  PatchBroadcastBody,
  SendBroadcastBody,
} from './broadcasts.schema.js';

const route = keyedRoutes<{ broadcasts: BroadcastService }>();

// Issue 27 (docs/broadcasts.md): scope broadcasts:manage
export const broadcastRoutes = [
  route({
    method: 'POST',
    path: '/v1/broadcasts',
    scope: 'broadcasts:manage',
    summary:
      'Make a draft broadcast: content (or a template) for every contact of an audience or segment, optionally of a topic',
    body: CreateBroadcastBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentBroadcast(await services.broadcasts.create(principal.project.id, body)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/broadcasts',
    scope: 'broadcasts:manage',
    summary: "The project's broadcasts, newest first, with their counts",
    query: ListBroadcastsQuery,
    async handler({ services, principal, query }) {
      const page = await services.broadcasts.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentBroadcast) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/broadcasts/:id',
    scope: 'broadcasts:manage',
    summary: 'A broadcast: its status and counts',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentBroadcast(await services.broadcasts.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/broadcasts/:id',
    scope: 'broadcasts:manage',
    summary: 'Change a draft (null takes an optional field away)',
    body: PatchBroadcastBody,
    async handler({ services, principal, params, body }) {
      const b = await services.broadcasts.update(principal.project.id, params.id, body);
      return { status: 200, body: presentBroadcast(b) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/broadcasts/:id',
    scope: 'broadcasts:manage',
    summary: 'Delete a draft',
    async handler({ services, principal, params }) {
      await services.broadcasts.delete(principal.project.id, params.id);
      return { status: 200, body: presentDeletedBroadcast(params.id) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/broadcasts/:id/send',
    scope: 'broadcasts:manage',
    summary: 'Send a draft now, or at scheduled_at; test keys simulate, as for POST /v1/emails',
    body: SendBroadcastBody,
    async handler({ services, principal, params, body }) {
      return { status: 200, body: presentBroadcast(await services.broadcasts.send(principal, params.id, body)) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/broadcasts/:id/cancel',
    scope: 'broadcasts:manage',
    summary:
      'Cancel a draft, scheduled or sending broadcast: contacts not yet handed to the outbound queue get nothing',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentBroadcast(await services.broadcasts.cancel(principal.project.id, params.id)) };
    },
  }),
];
