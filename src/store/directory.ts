import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
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
export function makeDirectory(path: string): void {
  const first = mkdirSync(path, { recursive: true });
  if (first === undefined) return;
  for (let dir = path; ; dir = dirname(dir)) {
    syncDirectory(dirname(dir));
    if (dir === first) break;
  }
}
