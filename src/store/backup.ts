import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../migrations/index.js';
import { apiError, notFound, validationError } from '../lib/errors.js';
import { syncDirectory } from './directory.js';
import { sqliteFile } from './sqlite.js';

export interface BackupResult {
  file: string;
  bytes: number;
  /** the migrations the copy has applied */
  migrations: number;
}

/**
 * A consistent copy of the SQLite database, taken while `posthorn serve` may
 * be writing, with VACUUM INTO: it reads the database in one read transaction
 * (in WAL mode the writer carries on), so the copy is the database as of one
 * commit, compacted and self-contained (no -wal to go with it). The online
 * backup API (better-sqlite3's Database#backup) copies pages a step at a time
 * and starts over whenever another connection writes between two steps,
 * which a busy `serve` does all the time.
 *
 * The copy is written beside the target under a temporary name, created 0600
 * before SQLite writes a byte of it (it holds API key hashes, DKIM private
 * keys and mail), synced, and only then given its name: a crash leaves no
 * half-written file under the name the operator asked for.
 */
export function backupSqlite(dataDir: string, target: string, opts: { force: boolean }): BackupResult {
  const source = sqliteFile(dataDir);
  const file = resolve(target);
  if (!existsSync(source)) throw notFound(`database ${source}`);
  if (!opts.force && existsSync(file)) throw apiError('conflict', `${file} exists; give --force to replace it`);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  closeSync(openSync(tmp, 'wx', 0o600));
  try {
    // read-only: the copy never writes the live database, nor checkpoints it on close
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 10000');
      db.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      db.close();
    }
    syncFile(tmp);
    const migrations = readAppliedMigrations(tmp).length;
    if (opts.force) renameSync(tmp, file);
    else placeWithoutReplacing(tmp, file);
    syncDirectory(dirname(file));
    return { file, bytes: statSync(file).size, migrations };
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp);
  }
}

/** link() fails on an existing name where rename() would replace it: a file that appeared meanwhile is kept. */
function placeWithoutReplacing(tmp: string, file: string): void {
  try {
    linkSync(tmp, file);
  } catch (e) {
    if ((e as { code?: string }).code === 'EEXIST')
      throw apiError('conflict', `${file} exists; give --force to replace it`);
    throw e;
  }
}

export function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The names in a database's knex_migrations table, after checking that the
 * file is an intact SQLite database that Posthorn's migrations made and that
 * no migration of a newer Posthorn ran on it.
 */
export function readAppliedMigrations(path: string): string[] {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw validationError('file', `cannot open ${path}: ${(e as Error).message}`);
  }
  try {
    const integrity = tryRead(path, () => db.pragma('integrity_check') as Array<{ integrity_check: string }>);
    if (integrity.length !== 1 || integrity[0].integrity_check !== 'ok') {
      throw validationError(
        'file',
        `${path} fails SQLite's integrity check: ${integrity
          .slice(0, 3)
          .map((r) => r.integrity_check)
          .join('; ')}`,
      );
    }
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knex_migrations'").get();
    if (!table)
      throw validationError(
        'file',
        `${path} is a SQLite database, but not Posthorn's: it has no knex_migrations table`,
      );
    const names = (db.prepare('SELECT name FROM knex_migrations ORDER BY id').all() as Array<{ name: string }>).map(
      (r) => r.name,
    );
    const known = new Set(MIGRATIONS.map(([n]) => n));
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length)
      throw validationError(
        'file',
        `${path} was migrated by a newer Posthorn (${unknown.join(', ')}); restore it with that version`,
      );
    return names;
  } finally {
    db.close();
  }
}

function tryRead<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw validationError('file', `${path} is not a SQLite database: ${(e as Error).message}`);
  }
}
