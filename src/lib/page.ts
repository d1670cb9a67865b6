/** A page of a list: the items shown and the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * A page of a list read with `limit + 1` rows, newest first by id: the rows
 * to show, and the cursor of the next page (the last id shown) when more
 * follow.
 */
export function idPage<T extends { id: string }>(rows: readonly T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
}

/** The answer of a list route: `{ object: 'list', data, next_cursor }`, each item presented. */
export function listBody<T, J>(p: Page<T>, present: (item: T) => J) {
  return { object: 'list' as const, data: p.items.map(present), next_cursor: p.nextCursor };
}
