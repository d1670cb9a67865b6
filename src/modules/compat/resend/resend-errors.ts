import type { ApiError, ErrorCode } from '../../../lib/errors.js';

// The Resend-compatible surface (/resend, docs/resend.md) answers errors as Resend does: a flat
// `{statusCode, name, message}` (its SDK hands that body to the caller as it is), with Resend's
// status codes. The same ApiError the /v1 routes throw is translated here, in one table.

/** Resend's name and status for each of our codes; a code it has no word for keeps its status. */
const RESEND: Record<ErrorCode, { name: string; status?: number }> = {
  // Resend answers what fails validation with 422
  validation_error: { name: 'validation_error', status: 422 },
  invalid_variables: { name: 'validation_error', status: 422 },
  unauthorized: { name: 'invalid_api_key', status: 403 },
  // a key without the route's scope: Resend's word for a sending-only key
  forbidden: { name: 'restricted_api_key', status: 401 },
  account_not_approved: { name: 'validation_error' },
  account_suspended: { name: 'validation_error' },
  plan_limit_reached: { name: 'validation_error' },
  not_found: { name: 'not_found' },
  idempotency_conflict: { name: 'invalid_idempotent_request' },
  // "only a scheduled email can be cancelled or updated"
  not_schedulable: { name: 'validation_error', status: 422 },
  domain_already_registered: { name: 'validation_error', status: 403 },
  contact_exists: { name: 'validation_error', status: 422 },
  conflict: { name: 'validation_error', status: 422 },
  payload_too_large: { name: 'validation_error', status: 422 },
  // "The example.com domain is not verified"
  domain_not_verified: { name: 'validation_error', status: 403 },
  recipient_suppressed: { name: 'validation_error' },
  quota_exhausted: { name: 'monthly_quota_exceeded' },
  daily_limit_exceeded: { name: 'daily_quota_exceeded' },
  rate_limited: { name: 'rate_limit_exceeded' },
  internal_error: { name: 'application_error' },
  service_unavailable: { name: 'application_error' },
  storage_full: { name: 'application_error' },
};

/**
 * The error as Resend gives it. `keyGiven`: whether the request had an Authorization header (Resend
 * tells a missing key, 401 missing_api_key, from a wrong one, 403 invalid_api_key).
 */
export function resendError(err: ApiError, keyGiven: boolean): { status: number; body: object } {
  if (err.code === 'unauthorized' && !keyGiven)
    return { status: 401, body: { statusCode: 401, name: 'missing_api_key', message: err.message } };
  // Resend tells a key whose first request is still being answered from one reused with another body
  if (err.code === 'idempotency_conflict' && err.detail === 'in_flight')
    return { status: 409, body: { statusCode: 409, name: 'concurrent_idempotent_requests', message: err.message } };
  const r = RESEND[err.code];
  const status = r.status ?? err.status;
  return { status, body: { statusCode: status, name: r.name, message: err.message } };
}

/** The paths of the Resend-compatible surface. */
export const RESEND_PREFIX = '/resend';

export const isResendPath = (path: string): boolean => path === RESEND_PREFIX || path.startsWith(`${RESEND_PREFIX}/`);
