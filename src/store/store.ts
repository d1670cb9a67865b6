import { join } from 'node:path';
import knexModule, { type Knex } from 'knex';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrationSource } from '../../migrations/index.js';
import { BackgroundCheckpointer, WalSyncer } from './wal-sync.js';
import { WriteLock } from './write-lock.js';
import { makeDirectory } from './directory.js';
import type { SharedDurability } from './shared-durability.js';

const knexFactory = knexModule as unknown as typeof knexModule.knex;

// Timestamps are stored as epoch milliseconds in BIGINT columns on both
// databases; node-postgres would hand BIGINT back as a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Db = Knex | Knex.Transaction;
export type DatabaseClient = 'sqlite' | 'pg';

export interface StoreOptions {
  client: DatabaseClient;
  /** sqlite: the folder that holds posthorn.sqlite */
  dataDir?: string;
  /** pg: connection string */
  url?: string | null;
  /** pg pool size */
  poolMax?: number;
  /** sqlite: checkpoint the WAL on a thread of its own (the long-running server) */
  backgroundCheckpoints?: boolean;
  /** sqlite: shared by the stores of several threads of one process, one write transaction at a time */
  writeLock?: SharedArrayBuffer;
  /** sqlite: the process's fsync thread, shared by the stores of its threads (instead of a WalSyncer each) */
  durability?: SharedDurability;
}

/**
 * A transaction that has committed. `durable` resolves once it is on disk.
 * With a shared fsync thread, `seq` is its commit number: another thread of
 * the process can wait for it too (SharedDurability.whenDurable). Null
 * otherwise: only `durable` tells.
 */
export interface Committed<T> {
  value: T;
  durable: Promise<void>;
  seq: bigint | null;
}

export interface Store {
  readonly client: DatabaseClient;
  /** the writer: every transaction and write goes here */
  readonly knex: Knex;
  /**
   * For reads on hot paths (authentication, GETs). On SQLite a separate
   * read-only pool: in WAL mode readers never wait for the writer's commits
   * (and their fsync). On PostgreSQL the same pool as the writer.
   */
  readonly reader: Knex;
  /**
   * Raw SQL for the reads that every request makes (the API key lookup). On
   * SQLite a direct read-only handle with cached statements: going through
   * knex's pool costs far more than the query. On PostgreSQL, knex.raw.
   */
  readonly fast: SqlRunner;
  /** Run fn in one transaction; retried when the database reports a transient lock conflict. Resolves once durable. */
  tx<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * Like tx, but resolves at COMMIT with `durable`, which resolves once the
   * commit is on disk: a group-commit loop starts its next transaction at
   * once and answers its callers when `durable` does (on PostgreSQL the two
   * are the same moment).
   */
  commit<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<Committed<T>>;
  /**
   * Resolves once every commit made before the call, by any thread of this
   * process, is on disk: for an answer read from the store (a reader may see
   * a commit before its fsync).
   */
  barrier(): Promise<void>;
  /** A query that needs nothing but an answering database (readiness). */
  ping(): Promise<void>;
  migrateLatest(): Promise<string[]>;
  /** names of migrations not applied yet */
  pendingMigrations(): Promise<string[]>;
  migrateDown(): Promise<void>;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'posthorn.sqlite';

/** The SQLite database file in a data folder (its WAL is this path plus `-wal`). */
export const sqliteFile = (dataDir: string) => join(dataDir, SQLITE_FILE);

export interface SqlRunner {
  /** for compiling queries in this database's dialect */
  readonly knex: Knex;
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

export function openStore(opts: StoreOptions): Store {
  const sqlite = opts.client === 'sqlite';
  const file = sqlite ? sqliteFile(opts.dataDir!) : '';
  const checkpointer = sqlite && opts.backgroundCheckpoints ? new BackgroundCheckpointer(file) : null;
  const knex = sqlite ? sqliteKnex(opts.dataDir!, { autoCheckpointPages: checkpointer ? WAL_BOUND_PAGES : undefined }) : pgKnex(opts.url!, opts.poolMax ?? 10);
  const reader = sqlite ? sqliteKnex(opts.dataDir!, { readOnly: true }) : knex;
  const migrations = { migrationSource, tableName: 'knex_migrations' };
  const fast = sqlite ? sqliteRunner(knex, file) : knexRunner(knex);
  // SQLite commits write the WAL; they count as committed once it is fsynced (wal-sync.ts).
  const shared = sqlite ? (opts.durability ?? null) : null;
  const wal = sqlite && !shared ? new WalSyncer(`${file}-wal`) : null;
  const writeLock = sqlite && opts.writeLock ? new WriteLock(opts.writeLock) : null;
  const locked = async <T>(run: () => Promise<T>): Promise<T> => {
    if (!writeLock) return run();
    await writeLock.acquire();
    try {
      return await run();
    } finally {
      writeLock.release();
    }
  };
  // seq: the commit's number with a shared fsync thread, counted when COMMIT returned
  const durable = async (seq: bigint | null = shared?.committed() ?? null) => {
    if (shared) await shared.whenDurable(seq!);
    else if (wal) await wal.sync();
    else return;
    checkpointer?.committed();
  };
  const commit = async <T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<Committed<T>> => {
    const value = await locked(() => withRetry(() => knex.transaction(fn)));
    const seq = shared?.committed() ?? null;
    return { value, seq, durable: durable(seq) };
  };
  return {
    client: opts.client,
    knex,
    reader,
    fast,
    async tx(fn) {
      const { value, durable: onDisk } = await commit(fn);
      await onDisk;
      return value;
    },
    commit,
    async barrier() {
      // counted as a commit of its own: the fsync it waits for starts after this call
      await durable(shared?.committed() ?? null);
    },
    async ping() {
      await reader.raw('select 1');
    },
    async migrateLatest() {
      const [, names] = (await knex.migrate.latest(migrations)) as [number, string[]];
      await durable();
      return names;
    },
    async pendingMigrations() {
      const [, pending] = (await knex.migrate.list(migrations)) as [unknown[], Array<Parameters<typeof migrationSource.getMigrationName>[0]>];
      return pending.map((m) => migrationSource.getMigrationName(m));
    },
    async migrateDown() {
      await knex.migrate.rollback(migrations, true);
      await durable();
    },
    async close() {
      await checkpointer?.stop();
      await wal?.close();
      fast.close?.();
      if (reader !== knex) await reader.destroy();
      await knex.destroy();
    },
  };
}

/** The writer connection of each SQLite knex instance (keyed by its config object, which its transactions share). */
const writerConnections = new WeakMap<object, Database.Database>();

/**
 * The connection under a SQLite write transaction, to run a statement on it
 * directly: knex's query pipeline costs several times what SQLite takes for
 * a one-row statement, and the queue runs several such statements per email
 * while holding the write lock. Null for PostgreSQL and outside a
 * transaction (the pool's connection may then be in another's hands).
 */
export function sqliteConnectionOf(db: Db): Database.Database | null {
  if (!(db as Knex.Transaction).isTransaction) return null;
  return writerConnections.get((db.client as { config: object }).config) ?? null;
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

function sqliteKnex(dataDir: string, opts: { readOnly?: boolean; autoCheckpointPages?: number | undefined } = {}): Knex {
  makeDirectory(dataDir);
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
      afterCreate(conn: { exec(sql: string): void; prepare(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        try {
          conn.exec(pragmas);
          cachePreparedStatements(conn);
          if (!opts.readOnly) writerConnections.set(knex.client.config as object, conn as unknown as Database.Database);
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

function sqliteRunner(knex: Knex, file: string): SqlRunner & { close(): void } {
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

function knexRunner(knex: Knex): SqlRunner & { close?: () => void } {
  return {
    knex,
    async all<T>(sql: string, params: unknown[]): Promise<T[]> {
      return ((await knex.raw(sql, params as Knex.RawBinding[])) as { rows: T[] }).rows;
    },
  };
}

function pgKnex(url: string, poolMax: number): Knex {
  // A server that stops answering fails queries after 10 s instead of queueing them for a minute.
  return knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: poolMax }, acquireConnectionTimeout: 10_000 });
}

const TRANSIENT = new Set(['40001', '40P01']);
const isTransient = (code: string) => TRANSIENT.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');

/**
 * SQLite answers SQLITE_BUSY at once (without waiting on busy_timeout) when a
 * deferred transaction that has read tries to write after another process
 * committed; PostgreSQL reports serialization failures and deadlocks. The
 * transaction was rolled back in each case, so running it again is safe.
 */
async function withRetry<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (!code || !isTransient(code) || attempt >= 8) throw e;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
    }
  }
}

/**
 * A view of the store inside an open transaction: services called with it
 * join that transaction instead of opening their own, so that a caller can
 * compose several of them into one commit.
 */
export function withinTransaction(store: Store, trx: Knex.Transaction): Store {
  return { ...store, knex: trx, reader: trx, tx: (fn) => fn(trx), commit: async (fn) => ({ value: await fn(trx), durable: Promise.resolve(), seq: null }), barrier: async () => undefined };
}

/** The dialect behind a knex handle or transaction. */
export function dialectOf(db: Db): DatabaseClient {
  return (db.client as { config?: { client?: string } }).config?.client === 'pg' ? 'pg' : 'sqlite';
}

/**
 * Lock rows for the rest of the transaction before reading and rewriting
 * them (read-modify-write). PostgreSQL needs it when several processes share
 * the store; SQLite has one writer, whose transaction already excludes every
 * other. Ids are locked in order so that two transactions cannot deadlock.
 */
export async function lockRows(trx: Knex.Transaction, table: string, ids: string[]): Promise<void> {
  if (!ids.length || dialectOf(trx) !== 'pg') return;
  await trx(table).select('id').whereIn('id', [...ids].sort()).orderBy('id').forUpdate();
}

/** A unique index refused the row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY). */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
