import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import knexModule from 'knex';
import { openStore, type Store, type StoreOptions } from '../../src/store/store.js';
import { PG_URL } from './pg-note.js';
import { tempDir } from './temp-dir.js';

const knexFactory = knexModule;

export interface TestDatabase {
  /** what the store was opened with, to open a second connection to the same database */
  options: Parameters<typeof openStore>[0];
  store: Store;
  drop(): Promise<void>;
}

export { PG_LEFT_OUT, PG_URL } from './pg-note.js';

type ExtraOptions = Omit<StoreOptions, 'client' | 'dataDir'>;

/**
 * A fresh, empty SQLite database in its own temp folder (`extra`: more store options, e.g. background
 * checkpoints, or a function of the folder that gives them).
 */
export function freshSqlite(extra: ExtraOptions | ((dataDir: string) => ExtraOptions) = {}): TestDatabase {
  const dir = tempDir('posthorn-test-');
  const options = { ...(typeof extra === 'function' ? extra(dir) : extra), client: 'sqlite' as const, dataDir: dir };
  const store = openStore(options);
  return {
    options,
    store,
    async drop() {
      await store.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the PostgreSQL server of POSTHORN_TEST_PG_URL, dropped afterwards. */
export async function freshPg(): Promise<TestDatabase> {
  if (!PG_URL) throw new Error('POSTHORN_TEST_PG_URL is not set');
  const name = `posthorn_test_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const options = { client: 'pg' as const, url: url.toString() };
  const store = openStore(options);
  return {
    options,
    store,
    async drop() {
      await store.close().catch(() => undefined);
      const a = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
    },
  };
}

export type DatabaseKind = 'sqlite' | 'pg';

/** SQLite always; PostgreSQL too when POSTHORN_TEST_PG_URL is set. PostgreSQL suites carry "@pg" in their title. */
export const DATABASE_KINDS: DatabaseKind[] = PG_URL ? ['sqlite', 'pg'] : ['sqlite'];

export function freshDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  return kind === 'pg' ? freshPg() : Promise.resolve(freshSqlite());
}

/**
 * describe() the same suite once per database (Backstage's describe.each(databases)).
 * `db()` gives the suite's migrated database; each suite gets a new one.
 */
export function eachDatabase(title: string, suite: (db: () => TestDatabase, kind: DatabaseKind) => void): void {
  for (const kind of DATABASE_KINDS) {
    describe(`${title} [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
      let current: TestDatabase | undefined;
      before(async function () {
        current = await freshDatabase(kind);
        await current.store.migrateLatest();
      });
      suite(() => current!, kind);
      // registered after the suite's own hooks, so that it runs after them: the suite stops what uses the database first
      after(async function () {
        await current?.drop();
      });
    });
  }
}
