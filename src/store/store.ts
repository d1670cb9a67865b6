import { statfs } from 'node:fs/promises';
import knexModule, { type Knex } from 'knex';
import pg from 'pg';
import { MIGRATIONS, migrationSource } from '../../migrations/index.js';
import { BackgroundCheckpointer } from './wal-sync.js';
import { dialectOf, type DatabaseClient, type SqlRunner } from './db.js';
import { sqliteFile, sqliteKnex, sqliteRunner, WAL_BOUND_PAGES } from './sqlite.js';
import type { SharedDurability } from './shared-durability.js';
import { RESUME_FREE_BYTES, StorageState, type StorageLogger } from './storage-state.js';
import { writeMeta } from './meta.js';
import { committer, type Committed, type TransientReason } from './durable-commit.js';

export type { Committed } from './durable-commit.js';

const knexFactory = knexModule;

// Timestamps are stored as epoch milliseconds in BIGINT columns on both
// databases; node-postgres would hand BIGINT back as a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

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
  writeLock?: SharedArrayBuffer | undefined;
  /** sqlite: the process's fsync thread, shared by the stores of its threads (instead of a WalSyncer each) */
  durability?: SharedDurability | undefined;
  /**
   * The serving process's storage state (storage-state.ts): logged, with its
   * marker in dataDir, and shared by its threads (`shared`: another thread's).
   * Without it the store keeps a silent state of its own.
   */
  storage?: { shared?: SharedArrayBuffer | undefined; logger: StorageLogger } | undefined;
  /** told of each transaction run again after a deadlock, a serialization failure or SQLITE_BUSY (a metric) */
  onRetry?: ((reason: TransientReason) => void) | undefined;
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
  /** Whether writes fail for lack of space, shared by the threads of the process: its failures turn into storage_full here. */
  readonly storage: StorageState;
  /**
   * Since when writes have failed for lack of space (epoch ms), or null. Once
   * none has failed for a few seconds it looks whether there is room again
   * (free space under data_dir; on PostgreSQL a small write), for an
   * appliance no write reaches while it is not ready.
   */
  storageFull(): Promise<number | null>;
  /** a transaction, or one job of a group commit, runs again after a transient failure (StoreOptions.onRetry) */
  retried(reason: TransientReason): void;
  migrateLatest(): Promise<string[]>;
  /** names of migrations not applied yet */
  pendingMigrations(): Promise<string[]>;
  migrateDown(): Promise<void>;
  close(): Promise<void>;
}

export function openStore(opts: StoreOptions): Store {
  const sqlite = opts.client === 'sqlite';
  const file = sqlite ? sqliteFile(opts.dataDir!) : '';
  const checkpointer = sqlite && opts.backgroundCheckpoints ? new BackgroundCheckpointer(file) : null;
  const knex = sqlite
    ? sqliteKnex(opts.dataDir!, { autoCheckpointPages: checkpointer ? WAL_BOUND_PAGES : undefined })
    : pgKnex(opts.url!, opts.poolMax ?? 10);
  const reader = sqlite ? sqliteKnex(opts.dataDir!, { readOnly: true }) : knex;
  const fast = sqlite ? sqliteRunner(knex, file) : knexRunner(knex);
  const storage = new StorageState({
    shared: opts.storage?.shared,
    logger: opts.storage?.logger,
    markerDir: opts.storage ? opts.dataDir : undefined,
  });
  const retried = opts.onRetry ?? (() => undefined);
  const { commit, durable, wal } = committer(knex, sqlite ? opts : null, file, checkpointer, storage, retried);
  const hasRoom = sqlite
    ? () => freeSpaceAtLeast(opts.dataDir!, RESUME_FREE_BYTES)
    : () =>
        commit((trx) => writeMeta(trx, 'storage_probe', new Date().toISOString())).then(
          () => true,
          () => false,
        );
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
      await durable(true);
    },
    async ping() {
      await reader.raw('select 1');
    },
    storage,
    retried,
    storageFull: storageFullCheck(storage, hasRoom),
    ...migrator(knex, durable),
    async close() {
      await checkpointer?.stop();
      await wal?.close();
      fast.close?.();
      if (reader !== knex) await reader.destroy();
      await knex.destroy();
    },
  };
}

/** Store.storageFull: a full disk is known from failed writes; once they stop, hasRoom looks whether it has room again. */
function storageFullCheck(storage: StorageState, hasRoom: () => Promise<boolean>): () => Promise<number | null> {
  return async () => {
    const since = storage.fullSince();
    if (since === null || !storage.quiet()) return since;
    if (!(await hasRoom())) return storage.fullSince();
    storage.clear();
    return null;
  };
}

async function freeSpaceAtLeast(dir: string, bytes: number): Promise<boolean> {
  const s = await statfs(dir).catch(() => null);
  return s !== null && s.bavail * s.bsize >= bytes;
}

/** The migrations of migrations/index.ts; a change of schema counts once it is on disk. */
function migrator(
  knex: Knex,
  durable: () => Promise<void>,
): Pick<Store, 'migrateLatest' | 'pendingMigrations' | 'migrateDown'> {
  const migrations = { migrationSource, tableName: 'knex_migrations' };
  return {
    async migrateLatest() {
      return whileMigrationLocked(knex, async () => {
        await refuseNewerSchema(knex);
        const [, names] = (await knex.migrate.latest(migrations)) as [number, string[]];
        await durable();
        return names;
      });
    },
    async pendingMigrations() {
      const [, pending] = (await knex.migrate.list(migrations)) as [
        unknown[],
        Array<Parameters<typeof migrationSource.getMigrationName>[0]>,
      ];
      return pending.map((m) => migrationSource.getMigrationName(m));
    },
    async migrateDown() {
      await knex.migrate.rollback(migrations, true);
      await durable();
    },
  };
}

// Any number: the key of the session lock that the nodes of one PostgreSQL database take around migrating.
const MIGRATION_LOCK = 7_215_944_301;

/**
 * On PostgreSQL, several nodes may start at once on one database: the first
 * to take the advisory lock migrates, the others wait for it and then find
 * nothing left to do. The lock is held by a connection of its own and ends
 * with it, so a node killed while migrating does not leave it taken.
 */
async function whileMigrationLocked<T>(knex: Knex, fn: () => Promise<T>): Promise<T> {
  if (dialectOf(knex) !== 'pg') return fn();
  const client = knex.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<void>;
  };
  const conn = await client.acquireConnection();
  try {
    await conn.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await fn();
    } finally {
      await conn.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await client.releaseConnection(conn);
  }
}

interface PgConnection {
  query(sql: string, params: unknown[]): Promise<unknown>;
}

/** A database migrated by a newer version has migrations this one does not know: refused, naming them. */
async function refuseNewerSchema(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasTable('knex_migrations'))) return;
  const applied = await knex('knex_migrations').select<Array<{ name: string }>>('name');
  const known = new Set(MIGRATIONS.map(([name]) => name));
  const unknown = applied.map((r) => r.name).filter((n) => !known.has(n));
  if (unknown.length)
    throw new NewerSchema(
      `the database was migrated by a newer Posthorn than this one: it has migration${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} this version does not know. Run the newer version on this node too (every node of one database runs the same version)`,
    );
}

/** The database's schema is newer than this code: `serve` and every command refuse to use it. */
export class NewerSchema extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NewerSchema';
  }
}

function knexRunner(knex: Knex): SqlRunner & { close?: () => void } {
  return {
    knex,
    async all<T>(sql: string, params: unknown[]): Promise<T[]> {
      return (await knex.raw<{ rows: T[] }>(sql, params as Knex.RawBinding[])).rows;
    },
  };
}

function pgKnex(url: string, poolMax: number): Knex {
  // A server that stops answering fails queries after 10 s instead of queueing them for a minute.
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
}

/**
 * A view of the store inside an open transaction: services called with it
 * join that transaction instead of opening their own, so that a caller can
 * compose several of them into one commit.
 */
export function withinTransaction(store: Store, trx: Knex.Transaction): Store {
  return {
    ...store,
    knex: trx,
    reader: trx,
    tx: (fn) => fn(trx),
    commit: async (fn) => ({ value: await fn(trx), durable: Promise.resolve(), seq: null }),
    barrier: async () => undefined,
  };
}
