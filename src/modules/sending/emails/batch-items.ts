import { ApiError } from '../../../lib/errors.js';

// POST /v1/emails/batch: what goes wrong with one of the batch's emails names it by its index.

/** A batch's email `i`: its errors name it (`[3].to`). */
export function ofItem<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw itemError(i, e);
  }
}

export async function ofItemAsync<T>(i: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw itemError(i, e);
  }
}

export function itemError(i: number, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  // a validation error names its field and starts its message with it (CONTRACT §4): `[3].to: …`
  if (!e.field) return new ApiError(e.status, e.code, `[${i}]: ${e.message}`, undefined, e.headers);
  const field = `[${i}].${e.field}`;
  return new ApiError(e.status, e.code, `${field}: ${e.message.slice(e.field.length + 2)}`, field, e.headers);
}
