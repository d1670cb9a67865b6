import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { syncDirectory } from './directory.js';

/**
 * SQLite's WAL file at its path, for fsyncs: kept open between them, because
 * opening and closing it for every fsync cost more than the rest of a
 * commit's bookkeeping, and reopened when the path names another file
 * (SQLite deletes the WAL when its last connection closes and makes a new
 * one later). No WAL means nothing was written: nothing to make durable.
 * Whenever a WAL file is opened here for the first time (a new database, a
 * WAL made again after its last connection closed, or one left by an earlier
 * process) its directory is fsynced before the WAL is: until then the WAL's
 * name, and the database's created with it, may vanish in a power loss with
 * every commit in it. SQLite syncs that directory too, but only at its own
 * first sync of the WAL, which with synchronous=NORMAL is the first
 * checkpoint: after the 202s that depend on it.
 * Synchronous calls only, so that the fsync thread (wal-sync-thread.ts) and
 * WalSyncer (wal-sync.ts) follow the file the same way.
 */
export class WalFile {
  private file: { fd: number; ino: number } | null = null;

  constructor(readonly path: string) {}

  /** The descriptor of the file the path names now, or null when there is none. */
  current(): number | null {
    let ino: number;
    try {
      ino = statSync(this.path).ino;
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return this.close();
      throw e;
    }
    if (this.file?.ino === ino) return this.file.fd;
    this.close();
    this.file = this.open();
    return this.file?.fd ?? null;
  }

  /** A descriptor of the caller's own, to close after use (after close(): a late commit's sync). */
  openOwn(): number | null {
    return this.open()?.fd ?? null;
  }

  close(): null {
    if (this.file) closeSync(this.file.fd);
    this.file = null;
    return null;
  }

  private open(): { fd: number; ino: number } | null {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return null;
      throw e;
    }
    try {
      syncDirectory(dirname(this.path));
      return { fd, ino: fstatSync(fd).ino };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }
}
