import { Type } from '@sinclair/typebox';
import { validationError } from '../../../lib/errors.js';

// Resend's lists: `limit` (1–100, 20 by default) and one cursor, an item's id: `after` pages to
// older items, `before` to newer ones. The answer is `{object: 'list', has_more, data}`.

/** Resend's list query: `limit` 1–100 (20), and one cursor, `after` (older) or `before` (newer). */
export const ResendListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

/** The cursor of a Resend list query; both at once is refused, as Resend refuses it. */
export function cursorOf(q: { after?: string | undefined; before?: string | undefined }) {
  if (q.after !== undefined && q.before !== undefined)
    throw validationError('before', 'cannot be given with after: page one way at a time');
  return { before: q.after, newerThan: q.before };
}

/** A list's answer as Resend gives it. */
export function resendList<T>(data: T[], hasMore: boolean) {
  return { object: 'list' as const, has_more: hasMore, data };
}
