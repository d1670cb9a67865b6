import { rmSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import knexModule from 'knex';
import { openStore, type Store, type StoreOptions } from '../../src/store/store.js';
import { MIGRATIONS } from '../../migrations/index.js';
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

/**
 * A fresh database on the PostgreSQL server of POSTHORN_TEST_PG_URL, dropped afterwards: a copy of
 * a migrated template (the same migrations: migrateLatest finds nothing to do), or with `empty`
 * one without tables, for the tests of migrating itself. Migrating each database anew took 1 to
 * 1.5 s of a loaded server per suite, a minute of a CI run over all of them.
 */
export async function freshPg(o: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (!PG_URL) throw new Error('POSTHORN_TEST_PG_URL is not set');
  const name = `posthorn_test_${randomBytes(6).toString('hex')}`;
  const template = o.empty ? null : await migratedTemplate();
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await admin.destroy();
  const options = { client: 'pg' as const, url: databaseUrl(name) };
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

const databaseUrl = (name: string): string => {
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  return url.toString();
};

let template: Promise<string> | null = null;

/**
 * The name of a database migrated to this checkout's migrations, made once on the server and kept
 * there for later runs (its name says which migrations it holds; older ones are dropped). The
 * workers of a parallel run take turns through an advisory lock; the copy is built under another
 * name and renamed, so that no worker ever copies a half-migrated one.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const hash = createHash('sha256')
      // names and code: a migration edited under the same name makes a new template
      .update(MIGRATIONS.map(([name, m]) => `${name}\n${m.up.toString()}\n${m.down.toString()}`).join('\n'))
      .digest('hex')
      .slice(0, 12);
    // the time it was made is in its name: another checkout's run on the same server (other
    // migrations, another hash) may be using its own template now, so only old ones are dropped
    const prefix = `posthorn_tpl_${hash}_`;
    const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 1, max: 1 } });
    try {
      await admin.raw('select pg_advisory_lock(?)', [LOCK]);
      const have = await admin.raw<{ rows: Array<{ datname: string }> }>(
        "select datname from pg_database where datname like 'posthorn_tpl_%'",
      );
      const mine = have.rows.find((r) => r.datname.startsWith(prefix) && !r.datname.endsWith('_building'));
      if (mine) return mine.datname;
      const madeAt = (n: string) => Number(/_(\d+)(?:_building)?$/.exec(n)?.[1] ?? 0);
      for (const r of have.rows)
        if (Date.now() / 1000 - madeAt(r.datname) > STALE_TEMPLATE_S)
          await admin.raw(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`);
      const name = `${prefix}${Math.floor(Date.now() / 1000)}`;
      const building = `${name}_building`;
      await admin.raw(`CREATE DATABASE ${building}`);
      const store = openStore({ client: 'pg', url: databaseUrl(building) });
      try {
        await store.migrateLatest();
      } finally {
        await store.close();
      }
      await admin.raw(`ALTER DATABASE ${building} RENAME TO ${name}`);
      return name;
    } finally {
      await admin.raw('select pg_advisory_unlock(?)', [LOCK]).catch(() => undefined);
      await admin.destroy();
    }
  })();
  return template;
}

/** a template another checkout made is dropped once this old (its run is long over) */
const STALE_TEMPLATE_S = 6 * 3600;

/** the advisory lock of the template's making (any number the tests use for nothing else) */
const LOCK = 7_412_043;

export type DatabaseKind = 'sqlite' | 'pg';

/** SQLite always; PostgreSQL too when POSTHORN_TEST_PG_URL is set. PostgreSQL suites carry "@pg" in their title. */
export const DATABASE_KINDS: DatabaseKind[] = PG_URL ? ['sqlite', 'pg'] : ['sqlite'];

/** `empty`: PostgreSQL without the migrated template's tables (SQLite's is always empty). */
export function freshDatabase(kind: DatabaseKind, o: { empty?: boolean } = {}): Promise<TestDatabase> {
  return kind === 'pg' ? freshPg(o) : Promise.resolve(freshSqlite());
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
