import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knexModule, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../migrations/index.js';

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
  /** Run fn in one transaction; retried when the database reports a transient lock conflict. */
  tx<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  migrateLatest(): Promise<string[]>;
  /** names of migrations not applied yet */
  pendingMigrations(): Promise<string[]>;
  migrateDown(): Promise<void>;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'posthorn.sqlite';

export function openStore(opts: StoreOptions): Store {
  const knex = opts.client === 'sqlite' ? sqliteKnex(opts.dataDir!) : pgKnex(opts.url!, opts.poolMax ?? 10);
  const reader = opts.client === 'sqlite' ? sqliteKnex(opts.dataDir!, { readOnly: true }) : knex;
  const migrations = { migrationSource, tableName: 'knex_migrations' };
  return {
    client: opts.client,
    knex,
    reader,
    tx: (fn) => withRetry(() => knex.transaction(fn)),
    async migrateLatest() {
      const [, names] = (await knex.migrate.latest(migrations)) as [number, string[]];
      return names;
    },
    async pendingMigrations() {
      const [, pending] = (await knex.migrate.list(migrations)) as [unknown[], Array<Parameters<typeof migrationSource.getMigrationName>[0]>];
      return pending.map((m) => migrationSource.getMigrationName(m));
    },
    async migrateDown() {
      await knex.migrate.rollback(migrations, true);
    },
    async close() {
      if (reader !== knex) await reader.destroy();
      await knex.destroy();
    },
  };
}

function sqliteKnex(dataDir: string, opts: { readOnly?: boolean } = {}): Knex {
  mkdirSync(dataDir, { recursive: true });
  // WAL + synchronous=FULL: a commit is on disk before it returns, so a 202 survives power loss.
  const pragmas = opts.readOnly
    ? 'PRAGMA busy_timeout = 10000; PRAGMA query_only = ON;'
    : 'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;';
  return knexFactory({
    client: 'sqlite3',
    connection: { filename: join(dataDir, SQLITE_FILE) },
    useNullAsDefault: true,
    // The writer has one connection: SQLite has one writer anyway, and one
    // connection makes every transaction of this process strictly serial.
    pool: {
      min: opts.readOnly ? 0 : 1,
      max: opts.readOnly ? 3 : 1,
      afterCreate(conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.exec(pragmas, (err) => done(err, conn));
      },
    },
  });
}

function pgKnex(url: string, poolMax: number): Knex {
  return knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: poolMax } });
}

const TRANSIENT = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', '40001', '40P01']);

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
      if (!code || !TRANSIENT.has(code) || attempt >= 8) throw e;
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
  return { ...store, knex: trx, reader: trx, tx: (fn) => fn(trx) };
}
