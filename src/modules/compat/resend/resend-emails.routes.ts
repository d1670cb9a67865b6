import { Type } from '@sinclair/typebox';
import { keyedRoutes } from '../../account/keys/principal.js';
import type { EmailService } from '../../sending/emails/emails.service.js';
import { lastEventByStatus, lastEventOf, resendEmail, resendListedEmail } from './resend-emails.js';
import { fromResendEmail, ResendEmailBody, scheduledAt } from './resend-email-body.js';
import { sendResendBatch } from './resend-batch.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { cursorOf, ResendListQuery } from './resend-lists.js';

const route = keyedRoutes<{ emails: EmailService }>();

// Resend's emails routes (docs/resend.md), over the /v1 emails service.
export const resendEmailRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/emails`,
    scope: 'emails:send',
    summary: "Resend's send: queue an email; answers {id}",
    body: ResendEmailBody,
    async handler(ctx) {
      const { services, principal, body, requestId } = ctx;
      const ours = fromResendEmail(body, Date.now());
      const sent = await services.emails.send(principal, ours, requestId, ctx.header('idempotency-key'));
      const id = sent.email ? sent.email.id : (sent.replay.body as { id: string }).id;
      return { status: 200, body: { id } };
    },
  }),
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/emails/batch`,
    scope: 'emails:send',
    summary: "Resend's batch send: up to 100 emails; `x-batch-validation: permissive` queues the valid ones",
    body: Type.Array(ResendEmailBody, { minItems: 1, maxItems: 100 }),
    async handler(ctx) {
      const permissive = ctx.header('x-batch-validation') === 'permissive';
      const body = await sendResendBatch(ctx.services.emails, ctx.principal, ctx.body, {
        requestId: ctx.requestId,
        idempotencyKey: ctx.header('idempotency-key'),
        permissive,
      });
      return { status: 200, body };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/emails`,
    scope: 'emails:read',
    summary: "Resend's list of emails, newest first: {object: 'list', has_more, data}",
    query: ResendListQuery,
    async handler({ services, principal, query }) {
      const page = await services.emails.list(principal.project.id, { limit: query.limit, ...cursorOf(query) });
      return {
        status: 200,
        body: {
          object: 'list',
          has_more: page.nextCursor !== null,
          data: page.items.map((e) => resendListedEmail(e, lastEventByStatus(e))),
        },
      };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/emails/:id`,
    scope: 'emails:read',
    summary: "Resend's email: its fields, html and text, tags and last_event",
    async handler({ services, principal, params }) {
      const email = await services.emails.get(principal.project.id, params.id);
      const events = await services.emails.events(principal.project.id, params.id);
      return { status: 200, body: resendEmail(email, lastEventOf(events.map((e) => e.type))) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/emails/:id`,
    scope: 'emails:send',
    summary: "Resend's update: move a scheduled email (ISO 8601 or a phrase such as 'in 1 hour')",
    body: Type.Object({ scheduled_at: Type.String() }, { additionalProperties: true }),
    async handler({ services, principal, params, body }) {
      const e = await services.emails.reschedule(
        principal.project.id,
        params.id,
        scheduledAt(body.scheduled_at, Date.now()),
      );
      return { status: 200, body: { object: 'email', id: e.id } };
    },
  }),
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/emails/:id/cancel`,
    scope: 'emails:send',
    summary: "Resend's cancel: a scheduled email is not sent",
    async handler({ services, principal, params }) {
      const e = await services.emails.cancel(principal.project.id, params.id);
      return { status: 200, body: { object: 'email', id: e.id } };
    },
  }),
];
