import type { Context, Next } from 'koa';
import { ApiError, apiError } from '../lib/errors.js';
import { isStorageFull, storageFull } from '../lib/storage-full.js';
import type { Logger } from '../log/logger.js';
import { isResendPath, resendError } from '../modules/compat/resend/resend-errors.js';

/** CONTRACT §4: {"error": {"code", "message", "field"?}, "request_id"} */
export function errorBody(err: ApiError, requestId: string) {
  return {
    error: { code: err.code, message: err.message, ...(err.field !== undefined ? { field: err.field } : {}) },
    request_id: requestId,
  };
}

/** The one place where a failure becomes an HTTP answer. */
export function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (e) {
      const err = toApiError(e);
      // a full disk is logged where the store meets it, once a minute, not once a request
      if (err.status >= 500 && err.code !== 'storage_full')
        logger.error({ err: e, request_id: ctx.state.requestId }, 'request failed');
      ctx.set(err.headers);
      // the Resend-compatible surface answers as Resend does (docs/resend.md)
      if (isResendPath(ctx.path)) {
        const r = resendError(err, Boolean(ctx.get('authorization')));
        ctx.status = r.status;
        ctx.body = r.body;
        return;
      }
      ctx.status = err.status;
      ctx.body = errorBody(err, ctx.state.requestId as string);
    }
  };
}

function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  // Errors thrown by Koa itself or @koa/router carry an HTTP status.
  const status = (e as { status?: number }).status;
  if (status === 404) return apiError('not_found', 'no such route');
  if (status && status >= 400 && status < 500)
    return new ApiError(400, 'validation_error', (e as Error).message || 'bad request', 'request');
  // a write that reached the disk outside the store's transactions
  if (isStorageFull(e)) return storageFull();
  return apiError('internal_error', 'internal error');
}
