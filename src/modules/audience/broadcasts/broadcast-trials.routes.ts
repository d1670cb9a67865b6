import { ApiError, validationError } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentEmail } from '../../sending/emails/emails.presenter.js';
import type { EmailService } from '../../sending/emails/emails.service.js';
import { presentBroadcastPreview, presentBroadcastReport } from './broadcasts.presenter.js';
import type { BroadcastService } from './broadcasts.service.js';
import { PreviewBroadcastBody, TestBroadcastBody } from './broadcasts.schema.js';

/** The send path names the address `to[0]`: the test's body has one `to`. */
function asTestField(e: unknown): unknown {
  if (!(e instanceof ApiError) || !e.field?.startsWith('to[0]')) return e;
  return validationError('to', e.message.replace(/^to\[0\]: /, ''));
}

const route = keyedRoutes<{ broadcasts: BroadcastService; emails: EmailService }>();

// Issue 46 (docs/broadcasts.md "Trying a broadcast", "The report"): scope broadcasts:manage
export const broadcastTrialRoutes = [
  route({
    method: 'POST',
    path: '/v1/broadcasts/:id/preview',
    scope: 'broadcasts:manage',
    summary: "A broadcast's subject, html and text rendered for one contact of the project, as the fan-out would",
    body: PreviewBroadcastBody,
    async handler({ services, principal, params, body }) {
      const p = await services.broadcasts.preview(principal.project.id, params.id, body);
      return { status: 200, body: presentBroadcastPreview(params.id, p) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/broadcasts/:id/test',
    scope: 'broadcasts:manage',
    summary:
      'Send one test email of a broadcast to an address (tagged broadcast_test, not counted in the broadcast), through the POST /v1/emails path',
    body: TestBroadcastBody,
    async handler({ services, principal, params, body, requestId }) {
      const send = await services.broadcasts.testEmail(principal.project.id, params.id, body);
      // no Idempotency-Key: each press of "send a test" is meant to send one
      const sent = await services.emails.send(principal, send, requestId, undefined).catch((e: unknown) => {
        throw asTestField(e);
      });
      // without an Idempotency-Key there is no replay: the email is the one just accepted
      return { status: 202, body: presentEmail(sent.email!) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/broadcasts/:id/report',
    scope: 'broadcasts:manage',
    summary: "A broadcast's counts, its bounces by reason and type, and its outcomes per hour",
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: presentBroadcastReport(await services.broadcasts.report(principal.project.id, params.id)),
      };
    },
  }),
];
