import { chmodSync, constants, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../migrations/index.js';
import { apiError, notFound } from '../lib/errors.js';
import { readAppliedMigrations, syncFile } from './backup.js';
import { DataDirLocked, lockDataDir } from './data-dir-lock.js';
import { syncDirectory } from './directory.js';
import { sqliteFile } from './sqlite.js';

export interface RestoreResult {
  restored_from: string;
  database: string;
  /** where the database it replaced was put, or null when there was none */
  replaced_kept_as: string | null;
  migrations: number;
  /** migrations of this version the backup predates: `serve` (or `migrate`) applies them */
  pending: string[];
}

/**
 * Puts a backup in place of the SQLite database of a data directory that no
 * `serve` owns. The lock `serve` takes is held here for the whole swap, so
 * no `serve` starts on a database half replaced. The backup is copied beside
 * the database and checked there (what is checked is what gets installed);
 * the old database goes aside with its -wal, so that nothing of it is lost
 * and no stale WAL is ever applied to the restored file.
 */
export function restoreSqlite(dataDir: string, backup: string, now: Date): RestoreResult {
  const from = resolve(backup);
  if (!existsSync(from) || !statSync(from).isFile()) throw notFound(`backup file ${from}`);
  const unlock = lockForRestore(dataDir);
  const db = sqliteFile(dataDir);
  const incoming = `${db}.restoring`;
  // reading a WAL-mode file (a plain copy of a database) leaves an empty -wal and -shm of its name
  const sidecars = [`${incoming}-wal`, `${incoming}-shm`];
  const remove = (files: string[]) => files.forEach((f) => rmSync(f, { force: true }));
  try {
    remove([incoming, ...sidecars]);
    copyFileSync(from, incoming, constants.COPYFILE_EXCL);
    chmodSync(incoming, 0o600);
    syncFile(incoming);
    const applied = readAppliedMigrations(incoming);
    remove(sidecars);
    const aside = existsSync(db)
      ? setAside(db, `${db}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`)
      : null;
    renameSync(incoming, db);
    syncDirectory(dataDir);
    const done = new Set(applied);
    return {
      restored_from: from,
      database: db,
      replaced_kept_as: aside,
      migrations: applied.length,
      pending: MIGRATIONS.map(([n]) => n).filter((n) => !done.has(n)),
    };
  } finally {
    remove([incoming, ...sidecars]);
    unlock();
  }
}

function lockForRestore(dataDir: string): () => void {
  try {
    return lockDataDir(dataDir);
  } catch (e) {
    if (e instanceof DataDirLocked)
      throw apiError(
        'conflict',
        `posthorn serve is running on ${dataDir}: stop it, then restore (posthorn backup works while it runs)`,
      );
    throw e;
  }
}

/**
 * Folds the WAL into the database first when it can (the file set aside is
 * then whole on its own); a database too damaged for that goes aside with
 * its -wal under the matching name, which SQLite pairs with it when opened.
 */
function setAside(db: string, aside: string): string {
  try {
    const old = new Database(db, { fileMustExist: true });
    try {
      old.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      old.close();
    }
  } catch {
    // kept as it is: the -wal goes aside with it below
  }
  renameSync(db, aside);
  if (existsSync(`${db}-wal`)) renameSync(`${db}-wal`, `${aside}-wal`);
  // the -shm is an index of the -wal, rebuilt from it when needed
  rmSync(`${db}-shm`, { force: true });
  return aside;
}
