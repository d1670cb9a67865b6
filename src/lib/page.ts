/**
 * A page of a list read with `limit + 1` rows, newest first by id: the rows
 * to show, and the cursor of the next page (the last id shown) when more
 * follow.
 */
export function idPage<T extends { id: string }>(
  rows: readonly T[],
  limit: number,
): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, nextCursor: rows.length > limit ? page[page.length - 1].id : null };
}
