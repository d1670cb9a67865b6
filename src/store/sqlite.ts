import Database from 'better-sqlite3';
import knexModule, { type Knex } from 'knex';
import type { Db, SqlRunner } from './db.js';
import { makePrivateDirectory, makePrivateFile, tightenIfPresent } from './directory.js';
import { join } from 'node:path';

const knexFactory = knexModule;

export const SQLITE_FILE = 'posthorn.sqlite';

/** The SQLite database file in a data folder (its WAL is this path plus `-wal`). */
export const sqliteFile = (dataDir: string) => join(dataDir, SQLITE_FILE);

/** The writer connection of each SQLite knex instance (keyed by its config object, which its transactions share). */
const writerConnections = new WeakMap<object, Database.Database>();
const readerConnections = new WeakMap<object, Database.Database>();
const configKey = (db: Db): object => (db.client as { config: object }).config;

/**
 * The connection under a SQLite write transaction, or a read-only handle's
 * connection, to run a statement on it directly: knex's query pipeline costs
 * several times what SQLite takes for a one-row statement, and the queue runs
 * several such statements per email while holding the write lock. Null for
 * PostgreSQL and for the writer outside a transaction (the pool's connection
 * may then be in another's hands).
 */
export function sqliteConnectionOf(db: Db): Database.Database | null {
  const config = configKey(db);
  // a read-only handle's one connection runs single statements only (no transaction is ever open on it)
  if (!(db as Knex.Transaction).isTransaction) return readerConnections.get(config) ?? null;
  return writerConnections.get(config) ?? null;
}

/** Values as better-sqlite3 binds them (knex does the same): booleans as 0/1, undefined as NULL. */
export function sqliteValue(v: unknown): unknown {
  return typeof v === 'boolean' ? Number(v) : v === undefined ? null : v;
}

/**
 * With a background checkpointer, the WAL size at which the writer still checkpoints in its own
 * commit (pages; 64 MB at 4 KB). PASSIVE checkpoints copy frames without blocking the writer, but
 * SQLite starts the WAL over only after a checkpoint that found nothing left to copy, which never
 * happens while commits keep coming: under sustained load the WAL grew by about 60 MB/s. At this
 * bound the commit copies what the checkpointer has not yet (a few hundred ms of writes) and the
 * next transaction starts the WAL over: one slower commit every few seconds of full load, instead
 * of one in every dozen commits as with SQLite's default of 1,000 pages.
 */
export const WAL_BOUND_PAGES = 16_384;

/**
 * The data folder owner-only (0700) and the database file created owner-only
 * (0600) before SQLite opens it: it holds DKIM private keys and webhook
 * secrets. SQLite gives the -wal and -shm files it creates the database's
 * mode; those an older version left are tightened here, like the folder and
 * the database.
 */
export function makePrivateDataDir(dataDir: string): void {
  makePrivateDirectory(dataDir);
  const file = sqliteFile(dataDir);
  makePrivateFile(file);
  tightenIfPresent(`${file}-wal`);
  tightenIfPresent(`${file}-shm`);
}

export function sqliteKnex(
  dataDir: string,
  opts: { readOnly?: boolean; autoCheckpointPages?: number | undefined } = {},
): Knex {
  makePrivateDataDir(dataDir);
  // WAL; the writer's commits are made durable by an fsync of the WAL before a transaction
  // counts as committed (synchronous=NORMAL plus WalSyncer: FULL's guarantee without blocking
  // the event loop), so a 202 survives power loss.
  // temp_store = MEMORY: the statement journal of a savepoint (GroupCommit runs each job in one)
  // stays in memory. It only serves to roll a savepoint back while the transaction is open, never
  // recovery, and as a temporary file it cost most group commits an openat, an unlink and a
  // pwrite per page it touched.
  const pragmas = opts.readOnly
    ? 'PRAGMA busy_timeout = 5000; PRAGMA query_only = ON;'
    : `PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY;${opts.autoCheckpointPages !== undefined ? ` PRAGMA wal_autocheckpoint = ${opts.autoCheckpointPages};` : ''}`;
  // better-sqlite3 runs each statement synchronously in a few microseconds; the async
  // sqlite3 driver's hop through the thread pool per statement cost more than the
  // statements themselves and capped the group commit far below the disk's fsync rate.
  const knex: Knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: sqliteFile(dataDir), options: { readonly: false } },
    useNullAsDefault: true,
    // One connection per pool: SQLite has one writer anyway, and one connection makes
    // every transaction of this process strictly serial. Reads have their own.
    pool: {
      min: 1,
      max: 1,
      afterCreate(
        conn: { exec(sql: string): void; prepare(sql: string): unknown },
        done: (err: Error | null, conn: unknown) => void,
      ) {
        try {
          conn.exec(pragmas);
          cachePreparedStatements(conn);
          (opts.readOnly ? readerConnections : writerConnections).set(
            configKey(knex),
            conn as unknown as Database.Database,
          );
          done(null, conn);
        } catch (e) {
          done(e as Error, conn);
        }
      },
    },
  });
  return knex;
}

/**
 * knex prepares every statement anew; parsing the SQL costs more than running
 * most of ours. The appliance issues a small, fixed set of statement shapes,
 * so each connection keeps the prepared ones, keyed by SQL text.
 */
function cachePreparedStatements(conn: { prepare(sql: string): unknown }): void {
  const prepare = conn.prepare.bind(conn);
  const cache = new Map<string, unknown>();
  conn.prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt === undefined) {
      stmt = prepare(sql);
      if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

export function sqliteRunner(knex: Knex, file: string): SqlRunner & { close(): void } {
  let db: Database.Database | null = null;
  const statements = new Map<string, Database.Statement>();
  return {
    knex,
    async all<T>(sql: string, params: unknown[]): Promise<T[]> {
      // opened on first use: by then the migrations have created the file
      db ??= new Database(file, { readonly: true, timeout: 5000 });
      let st = statements.get(sql);
      if (!st) {
        st = db.prepare(sql);
        statements.set(sql, st);
      }
      return st.all(...params.map((p) => (typeof p === 'boolean' ? Number(p) : p))) as T[];
    },
    close() {
      db?.close();
      db = null;
      statements.clear();
    },
  };
}
