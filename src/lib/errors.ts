// The registry of error codes (interface §7, CONTRACT §4) and their HTTP
// status. Services throw ApiError; the API maps it to the error body in one
// place (api/errors.ts), the CLI prints it, the SMTP listeners turn it into a
// reply. Nothing matches on message text.

export const ERROR_STATUS = {
  validation_error: 400,
  invalid_variables: 400,
  unauthorized: 401,
  forbidden: 403,
  account_not_approved: 403,
  account_suspended: 403,
  plan_limit_reached: 403,
  not_found: 404,
  idempotency_conflict: 409,
  not_schedulable: 409,
  domain_already_registered: 409,
  contact_exists: 409,
  conflict: 409,
  payload_too_large: 413,
  domain_not_verified: 422,
  recipient_suppressed: 422,
  quota_exhausted: 429,
  daily_limit_exceeded: 429,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  storage_full: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  /** extra response headers, e.g. Retry-After */
  readonly headers: Record<string, string>;
  /** a finer kind within the code, for a surface that tells them apart (the Resend-compatible one) */
  readonly detail: ErrorDetail | undefined;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    field?: string,
    headers: Record<string, string> = {},
    detail?: ErrorDetail,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.headers = headers;
    this.detail = detail;
  }
}

/** `in_flight`: an Idempotency-Key whose first request is still being answered (idempotency_conflict). */
export type ErrorDetail = 'in_flight';

export const apiError = (code: ErrorCode, message: string, headers?: Record<string, string>, detail?: ErrorDetail) =>
  new ApiError(ERROR_STATUS[code], code, message, undefined, headers, detail);

/** A validation error names the field and starts its message with it (CONTRACT §4). */
export const validationError = (field: string, message: string) =>
  new ApiError(400, 'validation_error', `${field}: ${message}`, field);

export const notFound = (what: string) => apiError('not_found', `${what} not found`);
