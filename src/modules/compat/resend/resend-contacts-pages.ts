import { cursorOf } from './resend-lists.js';

// A contact's segments and topics are few and read whole; Resend pages them all the same
// (`limit`, `after` = older than that id, `before` = newer), and this is that page. Pure.

/** The page of `items` (any order) a Resend list query asks for, newest first by id, and whether more follow it. */
export function pageHeld<T extends { id: string }>(
  items: readonly T[],
  q: { limit: number; after?: string | undefined; before?: string | undefined },
): { data: T[]; hasMore: boolean } {
  const { before: olderThan, newerThan } = cursorOf(q);
  const newestFirst = [...items].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  if (newerThan !== undefined) {
    // the `limit` just above the cursor, as a list read upward from it shows them
    const newer = newestFirst.filter((x) => x.id > newerThan);
    return { data: newer.slice(Math.max(0, newer.length - q.limit)), hasMore: newer.length > q.limit };
  }
  const older = olderThan === undefined ? newestFirst : newestFirst.filter((x) => x.id < olderThan);
  return { data: older.slice(0, q.limit), hasMore: older.length > q.limit };
}
