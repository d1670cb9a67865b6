// "The disk is full" as each layer below reports it: the file system (ENOSPC,
// EDQUOT from a quota), SQLite (SQLITE_FULL: a write could not grow the
// database or its WAL), PostgreSQL (SQLSTATE 53100 disk_full). The store
// turns any of them into ApiError storage_full (503 + Retry-After, SMTP
// 452 4.3.1); nothing else looks at these codes.

const CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/** True when `e` (or an error it wraps) says the storage has no room left. */
export function isStorageFull(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const { code, errno } = cur as { code?: unknown; errno?: unknown };
    if (typeof code === 'string' && CODES.has(code)) return true;
    // better-sqlite3 names the extended code (SQLITE_FULL); a raw errno 13 is SQLITE_FULL too
    if (typeof code === 'string' && code.startsWith('SQLITE_FULL')) return true;
    if (errno === -28) return true;
  }
  return false;
}
