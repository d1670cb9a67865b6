import type { Page } from '../../../lib/page.js';

/**
 * A page read upward from a cursor (the ids above it, oldest first, `limit + 1` rows), shown
 * newest first as every list is: the page just newer than the cursor (Resend's `before`). Its
 * cursor names the newest shown, and is null when nothing newer follows.
 */
export function upwardPage<T extends { id: string }>(rows: readonly T[], limit: number): Page<T> {
  return { items: rows.slice(0, limit).reverse(), nextCursor: rows.length > limit ? rows[limit - 1].id : null };
}
