import { chmodSync, closeSync, fchmodSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A file's name is durable only once its directory is: POSIX promises that a
 * created (or renamed) entry survives a power loss after an fsync of the
 * directory, not after an fsync of the file. A file system that cannot sync
 * a directory says so (EINVAL, ENOTSUP): there is nothing more to do, as
 * SQLite itself decides; any other failure is one.
 */
export function syncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP') throw e;
  } finally {
    closeSync(fd);
  }
}

/** mkdir -p whose new directories' names are durable: each one created is synced into its parent. */
export function makeDirectory(path: string, mode?: number): void {
  const first = mkdirSync(path, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  if (first === undefined) return;
  for (let dir = path; ; dir = dirname(dir)) {
    syncDirectory(dirname(dir));
    if (dir === first) break;
  }
}

/** Only the appliance's own user may list or open what is in the data folder. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** The database holds DKIM private keys and webhook secrets: only the appliance's own user may read it. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * makeDirectory for a folder of secrets: created owner-only, then set so
 * with chmod, since mkdir's mode is what the umask leaves of it and a
 * folder made by an older version (0755) is there already.
 */
export function makePrivateDirectory(path: string): void {
  makeDirectory(path, PRIVATE_DIRECTORY_MODE);
  chmodSync(path, PRIVATE_DIRECTORY_MODE);
}

/**
 * Creates the file if it is missing, empty and owner-only, before the
 * program that writes it (SQLite) opens it: SQLite creates a database with
 * 0644 less the umask, and its -wal and -shm files with the database's
 * mode. An existing one is tightened.
 */
export function makePrivateFile(path: string): void {
  const fd = openSync(path, 'a', PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** chmod to owner-only if the file is there (a -wal or -shm an older version left behind). */
export function tightenIfPresent(path: string): void {
  try {
    chmodSync(path, PRIVATE_FILE_MODE);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ENOENT') throw e;
  }
}
