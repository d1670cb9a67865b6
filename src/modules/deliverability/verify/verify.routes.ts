import { keyedRoutes } from '../../account/keys/principal.js';
import { VerifyBatchBody, VerifyOneBody } from './verify.schema.js';
import { presentVerification, presentVerifiedBatch } from './verify.presenter.js';
import type { VerifyService } from './verify.service.js';

const route = keyedRoutes<{ verify: VerifyService }>();

// interface §4.4, scope emails:verify
export const verifyRoutes = [
  route({
    method: 'POST',
    path: '/v1/verify/batch',
    scope: 'emails:verify',
    summary: 'Verify 1 to 100 addresses: results in the order sent, a summary and the month’s verifications',
    body: VerifyBatchBody,
    async handler({ services, principal, body }) {
      const batch = await services.verify.verify(principal.project.id, body.emails);
      return { status: 200, body: presentVerifiedBatch(batch) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/verify',
    scope: 'emails:verify',
    summary: 'Verify one address',
    body: VerifyOneBody,
    async handler({ services, principal, body }) {
      const { results } = await services.verify.verify(principal.project.id, [body.email]);
      return { status: 200, body: presentVerification(results[0]) };
    },
  }),
];
