import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makePrivateDirectory, makePrivateFile, tightenIfPresent } from './directory.js';

export const LOCK_FILE = 'posthorn.lock';

/** Another process holds the data directory. */
export class DataDirLocked extends Error {
  constructor(readonly dataDir: string) {
    super(
      `another posthorn serve is running on ${dataDir}: with SQLite one process owns the data directory (use PostgreSQL to run several)`,
    );
    this.name = 'DataDirLocked';
  }
}

/**
 * On SQLite one `posthorn serve` owns the queue: at start it takes over every
 * row left `submitting`, which would resend what a second process is sending
 * right now. This takes an exclusive SQLite lock on a file beside the
 * database (held until the process ends; the OS drops it on kill -9) and
 * refuses to start when another process holds it. CLI commands do not take it.
 */
export function lockDataDir(dataDir: string): () => void {
  makePrivateDirectory(dataDir);
  const file = join(dataDir, LOCK_FILE);
  // it holds nothing secret, but nothing in the data folder is for other users (its journal takes its mode)
  makePrivateFile(file);
  tightenIfPresent(`${file}-journal`);
  const db = new Database(file, { timeout: 0 });
  try {
    // In exclusive locking mode the lock taken by the first write is kept until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec(
      `BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS owner (pid INTEGER); DELETE FROM owner; INSERT INTO owner VALUES (${process.pid}); COMMIT;`,
    );
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new DataDirLocked(dataDir);
    }
    throw e;
  }
  return () => db.close();
}
