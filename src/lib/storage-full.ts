// "The disk is full" as each layer below reports it: the file system (ENOSPC,
// EDQUOT from a quota), SQLite (SQLITE_FULL: a write could not grow the
// database or its WAL), PostgreSQL (SQLSTATE 53100 disk_full). The store
// turns any of them into ApiError storage_full (503 + Retry-After, SMTP
// 452 4.3.1) and notes the state (store/storage-state.ts); the API's error
// handler and the accept relay do the same for one that reached them
// another way. Nothing else looks at these codes.

import { apiError, ApiError } from './errors.js';

// SQLITE_IOERR_SHMSIZE: the WAL index (-shm, beside the database) could not grow by one
// more 32 KB region, which SQLite allocates by writing to it: on a full disk, when the WAL
// passes another ~4,000 frames (every 16 MB) in the moment it fills.
const CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', '53100']);

/** True when `e` (or an error it wraps) says the storage has no room left. */
export function isStorageFull(e: unknown): boolean {
  for (
    let cur: unknown = e, depth = 0;
    cur && typeof cur === 'object' && depth < 5;
    cur = (cur as { cause?: unknown }).cause, depth++
  ) {
    const { code, errno } = cur as { code?: unknown; errno?: unknown };
    if (typeof code === 'string' && CODES.has(code)) return true;
    // better-sqlite3 names the extended code (SQLITE_FULL); a raw errno 13 is SQLITE_FULL too
    if (typeof code === 'string' && code.startsWith('SQLITE_FULL')) return true;
    if (errno === -28) return true;
  }
  return false;
}

/** Retry-After of a write refused for lack of space, in whole seconds: freeing space takes a person, not a millisecond. */
export const STORAGE_FULL_RETRY_AFTER_S = 30;

/** What a write answers while the storage is full: 503 storage_full with Retry-After (SMTP 452 4.3.1). */
export function storageFull(message = "the server's storage is full; nothing was stored; retry later"): ApiError {
  return apiError('storage_full', message, { 'Retry-After': String(STORAGE_FULL_RETRY_AFTER_S) });
}

/** A write refused for lack of space: the store's storage_full, or a layer's own code that reached here as it was. */
export function isStorageRefusal(e: unknown): boolean {
  return (e instanceof ApiError && e.code === 'storage_full') || isStorageFull(e);
}
