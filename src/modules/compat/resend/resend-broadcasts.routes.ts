import { validationError } from '../../../lib/errors.js';
import { keyedRoutes, type Principal } from '../../account/keys/principal.js';
import type { BroadcastService } from '../../audience/broadcasts/broadcasts.service.js';
import {
  duplicateOf,
  fromResendBroadcast,
  fromResendBroadcastPatch,
  resendBroadcast,
  resendListedBroadcast,
  ResendCreateBroadcastBody,
  ResendSendBroadcastBody,
  ResendUpdateBroadcastBody,
} from './resend-broadcasts.js';
import { scheduledAt } from './resend-email-body.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { cursorOf, ResendListQuery, resendList } from './resend-lists.js';

const route = keyedRoutes<{ broadcasts: BroadcastService }>();
const path = `${RESEND_PREFIX}/broadcasts`;

/** A send, now or at `at`; a draft made only to be sent goes when its send is refused (a create with send: true). */
async function sendMade(broadcasts: BroadcastService, principal: Principal, id: string, at: string | undefined) {
  try {
    await broadcasts.send(principal, id, at === undefined ? {} : { scheduled_at: at });
  } catch (e) {
    await broadcasts.delete(principal.project.id, id).catch(() => undefined);
    throw e;
  }
}

const notAvailable = (field: string, why: string) => () =>
  Promise.reject(validationError(field, `is not available here: ${why}`));

// Resend's broadcasts routes (docs/resend.md), over the /v1 broadcasts service (scope broadcasts:manage).
export const resendBroadcastsRoutes = [
  route({
    method: 'POST',
    path,
    scope: 'broadcasts:manage',
    summary: "Resend's create: a draft for a segment, or with send: true sent now or at scheduled_at; answers {id}",
    body: ResendCreateBroadcastBody,
    async handler({ services, principal, body }) {
      const draft = fromResendBroadcast(body);
      const at = body.scheduled_at == null ? undefined : scheduledAt(body.scheduled_at, Date.now());
      const { broadcast } = await services.broadcasts.create(principal.project.id, draft);
      if (body.send === true) await sendMade(services.broadcasts, principal, broadcast.id, at);
      return { status: 200, body: { id: broadcast.id } };
    },
  }),
  route({
    method: 'GET',
    path,
    scope: 'broadcasts:manage',
    summary: "Resend's list of broadcasts, newest first: {object: 'list', has_more, data}",
    query: ResendListQuery,
    async handler({ services, principal, query }) {
      const { before, newerThan } = cursorOf(query);
      const page = await services.broadcasts.list(principal.project.id, query.limit, before, newerThan);
      const data = page.items.map((c) => resendListedBroadcast(c.broadcast));
      return { status: 200, body: resendList(data, page.nextCursor !== null) };
    },
  }),
  route({
    method: 'GET',
    path: `${path}/:id`,
    scope: 'broadcasts:manage',
    summary: "Resend's broadcast: its segment, content (in Resend's variable syntax) and status",
    async handler({ services, principal, params }) {
      const { broadcast } = await services.broadcasts.get(principal.project.id, params.id);
      return { status: 200, body: resendBroadcast(broadcast) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${path}/:id`,
    scope: 'broadcasts:manage',
    summary: "Resend's update of a draft: the fields given replace; answers {id}",
    body: ResendUpdateBroadcastBody,
    async handler({ services, principal, params, body }) {
      const patch = fromResendBroadcastPatch(body);
      const projectId = principal.project.id;
      const { broadcast } = patch
        ? await services.broadcasts.update(projectId, params.id, patch)
        : await services.broadcasts.get(projectId, params.id);
      return { status: 200, body: { id: broadcast.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${path}/:id`,
    scope: 'broadcasts:manage',
    summary: "Resend's remove: a draft only",
    async handler({ services, principal, params }) {
      await services.broadcasts.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'broadcast', id: params.id, deleted: true } };
    },
  }),
  route({
    method: 'POST',
    path: `${path}/:id/send`,
    scope: 'broadcasts:manage',
    summary:
      "Resend's send of a draft: now, or at scheduled_at (ISO 8601 or a phrase such as 'in 1 hour'); answers {id}",
    body: ResendSendBroadcastBody,
    async handler({ services, principal, params, body }) {
      const at = body.scheduled_at == null ? {} : { scheduled_at: scheduledAt(body.scheduled_at, Date.now()) };
      const { broadcast } = await services.broadcasts.send(principal, params.id, at);
      return { status: 200, body: { id: broadcast.id } };
    },
  }),
  route({
    method: 'POST',
    path: `${path}/:id/cancel`,
    scope: 'broadcasts:manage',
    summary: "Resend's cancel: a scheduled or sending broadcast sends nothing more",
    async handler({ services, principal, params }) {
      const { broadcast } = await services.broadcasts.cancel(principal.project.id, params.id);
      return { status: 200, body: { object: 'broadcast', id: broadcast.id } };
    },
  }),
  route({
    method: 'POST',
    path: `${path}/:id/duplicate`,
    scope: 'broadcasts:manage',
    summary: "Resend's duplicate: a new draft of the same content and segment; answers the new id",
    async handler({ services, principal, params }) {
      const projectId = principal.project.id;
      const { broadcast } = await services.broadcasts.get(projectId, params.id);
      const copy = await services.broadcasts.create(projectId, duplicateOf(broadcast));
      return { status: 200, body: { object: 'broadcast', id: copy.broadcast.id } };
    },
  }),
  route({
    method: 'GET',
    path: `${path}/:id/recipients`,
    scope: 'broadcasts:manage',
    summary: "Resend's recipients of a broadcast: not available (refused with 422)",
    handler: notAvailable(
      'recipients',
      'Posthorn lists no recipients per broadcast; GET /v1/broadcasts/{id} counts them, GET /v1/emails?to= finds one',
    ),
  }),
  route({
    method: 'GET',
    path: `${path}/:id/clicked-links`,
    scope: 'broadcasts:manage',
    summary: "Resend's clicked links of a broadcast: not available (refused with 422)",
    handler: notAvailable(
      'clicked_links',
      'Posthorn counts the clicks of a broadcast (GET /v1/broadcasts/{id}: counts.clicked), not those of each link',
    ),
  }),
];
