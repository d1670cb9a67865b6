import { attachmentDisposition } from '../../../lib/content-disposition.js';
import { validationError } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentInbound, presentInboundSummary } from './inbound.presenter.js';
import { ListInboundQuery } from './inbound.schema.js';
import type { InboundService } from './inbound.service.js';
import { listBody } from '../../../lib/page.js';

const route = keyedRoutes<{ inbound: InboundService }>();

// CONTRACT §5 received mail; scope inbound:read everywhere
export const inboundRoutes = [
  route({
    method: 'GET',
    path: '/v1/inbound',
    scope: 'inbound:read',
    summary: 'List received mail, newest first',
    query: ListInboundQuery,
    async handler({ services, principal, query }) {
      const page = await services.inbound.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentInboundSummary) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/inbound/:id',
    scope: 'inbound:read',
    summary: 'Get a received message: text, html, headers, attachments',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentInbound(await services.inbound.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/inbound/:id/raw',
    scope: 'inbound:read',
    summary: 'The message as it arrived (message/rfc822)',
    async handler({ services, principal, params }) {
      const raw = await services.inbound.raw(principal.project.id, params.id);
      return { status: 200, headers: { 'Content-Type': 'message/rfc822' }, body: raw };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/inbound/:id/attachments/:index',
    scope: 'inbound:read',
    summary: "One attachment's content, with its content type",
    async handler({ services, principal, params }) {
      if (!/^\d{1,3}$/.test(params.index)) throw validationError('index', 'must be the attachment index (0, 1, …)');
      const a = await services.inbound.attachment(principal.project.id, params.id, Number(params.index));
      return {
        status: 200,
        headers: { 'Content-Type': a.contentType, 'Content-Disposition': attachmentDisposition(a.filename) },
        body: a.content,
      };
    },
  }),
];
