import { expect } from 'chai';
import { eachDatabase, freshDatabase, freshSqlite, DATABASE_KINDS } from '../helpers/databases.js';
import { systemClock } from '../../src/lib/time.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { createProject, setProject, listProjects } from '../../src/modules/account/projects/projects.service.js';
import { createKey, KEY_CACHE_MS, KeyAuthenticator, revokeKey } from '../../src/modules/account/keys/keys.service.js';
import { firstStart } from '../../src/modules/account/keys/first-start.js';
import { SCOPES } from '../../src/modules/account/keys/scopes.js';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isUniqueViolation } from '../../src/store/db.js';
import { openStore } from '../../src/store/store.js';
import { WAL_BOUND_PAGES } from '../../src/store/sqlite.js';
import { insertEmails, saveEmailState } from '../../src/modules/sending/emails/email-rows.repo.js';
import { findEmailById } from '../../src/modules/sending/emails/emails.repo.js';
import { storedEmail } from '../helpers/fixtures.js';

for (const kind of DATABASE_KINDS) {
  describe(`migrations [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    it('run up, down to nothing, and up again', async function () {
      const db = await freshDatabase(kind, { empty: true });
      try {
        expect(await db.store.pendingMigrations()).to.deep.equal(MIGRATIONS.map(([n]) => n));
        await db.store.migrateLatest();
        expect(await db.store.pendingMigrations()).to.deep.equal([]);
        expect(await db.store.knex.schema.hasTable('api_keys')).to.equal(true);
        await db.store.migrateDown();
        expect(await db.store.knex.schema.hasTable('projects')).to.equal(false);
        expect(await db.store.pendingMigrations()).to.have.length(MIGRATIONS.length);
        await db.store.migrateLatest();
        expect(await db.store.knex.schema.hasTable('emails')).to.equal(true);
      } finally {
        await db.drop();
      }
    });

    it('refuse a database a newer version migrated, naming the migration this one does not know', async function () {
      const db = await freshDatabase(kind);
      try {
        await db.store.migrateLatest();
        await db.store
          .knex('knex_migrations')
          .insert({ name: '0999_from_the_future', batch: 99, migration_time: new Date() });
        const refused = await db.store.migrateLatest().then(
          () => null,
          (e: Error) => e,
        );
        expect(refused?.name).to.equal('NewerSchema');
        expect(refused?.message)
          .to.match(/newer Posthorn/)
          .and.match(/0999_from_the_future/);
      } finally {
        await db.drop();
      }
    });
  });
}

eachDatabase('store', (db, kind) => {
  const deps = () => ({ store: db().store, clock: systemClock });

  it('rolls a failed transaction back whole', async function () {
    const before = (await listProjects(deps())).length;
    const err = await db()
      .store.tx(async (trx) => {
        await trx('projects').insert({
          id: 'prj_rollback',
          name: 'rollback',
          approved: false,
          suspended: false,
          daily_limit: 0,
          monthly_limit: 0,
          domain_limit: 0,
          verify_limit: 0,
          created_at: 1,
          updated_at: 1,
        });
        throw new Error('boom');
      })
      .catch((e: Error) => e);
    expect(err.message).to.equal('boom');
    expect((await listProjects(deps())).length).to.equal(before);
  });

  it('statements on the hot paths (SQLite: run on the connection directly) belong to the transaction they run in', async function () {
    const p = await createProject(deps(), { name: `direct-${kind}` });
    const email = await storedEmail(db().store, p.id);
    const err = await db()
      .store.tx(async (trx) => {
        await saveEmailState(trx, { ...email, status: 'accepted', acceptedAt: 5, updatedAt: 5 });
        expect((await findEmailById(trx, email.id))!.status).to.equal('accepted');
        throw new Error('boom');
      })
      .catch((e: Error) => e);
    expect(err.message).to.equal('boom');
    expect((await findEmailById(db().store.knex, email.id))!).to.include({ status: 'queued', acceptedAt: null });
    await db().store.tx((trx) => saveEmailState(trx, { ...email, status: 'accepted', acceptedAt: 5, updatedAt: 5 }));
    expect((await findEmailById(db().store.knex, email.id))!).to.include({ status: 'accepted', acceptedAt: 5 });
    // a duplicate row is reported as such, whichever way the statement ran
    const dup = await db()
      .store.tx((trx) => insertEmails(trx, [email]))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(dup), String(dup)).to.equal(true);
  });

  it('keeps projects with their settings and limits', async function () {
    const p = await createProject(deps(), { name: `p-${kind}`, approved: true });
    expect(p).to.include({ approved: true, suspended: false });
    expect(p.limits).to.deep.equal({ daily: 0, monthly: 0, domains: 0, verifications: 0 });
    const changed = await setProject(deps(), p.id, { suspended: true, limits: { daily: 100, domains: 2 } });
    expect(changed.limits).to.deep.equal({ daily: 100, monthly: 0, domains: 2, verifications: 0 });
    const listed = (await listProjects(deps())).find((x) => x.id === p.id)!;
    expect(listed).to.deep.include({ suspended: true, approved: true });
    expect(listed.limits.daily).to.equal(100);
  });

  it('refuses a second project with the same name', async function () {
    await createProject(deps(), { name: `dup-${kind}` });
    const e = await createProject(deps(), { name: `dup-${kind}` }).catch((x: { code: string }) => x);
    expect((e as { code: string }).code).to.equal('conflict');
  });

  it('stores only the hash of a key, and authenticates it until revoked', async function () {
    const p = await createProject(deps(), { name: `keys-${kind}` });
    const { key, secret } = await createKey(deps(), { projectId: p.id, mode: 'live' });
    expect(key.scopes).to.deep.equal([...SCOPES]);
    const rows = await db().store.knex('api_keys').where({ id: key.id });
    expect(JSON.stringify(rows)).to.not.include(secret.slice(8));
    // not even a few characters of the secret, as a display prefix
    expect(JSON.stringify(rows)).to.not.include(secret.slice(8, 14));
    const auth = new KeyAuthenticator(deps());
    expect((await auth.authenticate(secret))?.project.id).to.equal(p.id);
    await auth.flushLastUsed();
    const touched = await db().store.knex('api_keys').where({ id: key.id }).first();
    expect(Number(touched.last_used_at)).to.be.greaterThan(0);
    await revokeKey(deps(), key.id);
    // a revocation by another process counts once the key cache has run out
    await new Promise((r) => setTimeout(r, KEY_CACHE_MS + 20));
    expect(await auth.authenticate(secret)).to.equal(null);
  });

  it('creates the default project and its test key on the first start only', async function () {
    const first = await firstStart(db().store, systemClock);
    expect(first?.key).to.match(/^ph_test_[A-Za-z0-9]{40}$/);
    expect(await firstStart(db().store, systemClock)).to.equal(null);
    const principal = await new KeyAuthenticator(deps()).authenticate(first!.key);
    expect(principal?.project.name).to.equal('default');
    expect(principal?.key.scopes).to.deep.equal([...SCOPES]);
    expect(principal?.key.mode).to.equal('test');
  });

  it('gives the first-start key to exactly one of several processes starting together', async function () {
    const fresh = await freshDatabase(kind);
    await fresh.store.migrateLatest();
    const others = [openStore(fresh.options), openStore(fresh.options)];
    try {
      const results = await Promise.all([fresh.store, ...others].map((s) => firstStart(s, systemClock)));
      expect(results.filter((r) => r !== null)).to.have.length(1);
      expect(await fresh.store.knex('projects').where({ name: 'default' })).to.have.length(1);
    } finally {
      for (const o of others) await o.close();
      await fresh.drop();
    }
  });

  if (kind === 'sqlite') {
    it('opens SQLite in WAL mode (synchronous=NORMAL, the WAL fsynced before a transaction resolves), foreign keys on and a busy timeout', async function () {
      const k = db().store.knex;
      const mode = await k.raw<Array<{ journal_mode: string }>>('PRAGMA journal_mode');
      const sync = await k.raw<Array<{ synchronous: number }>>('PRAGMA synchronous');
      const fk = await k.raw<Array<{ foreign_keys: number }>>('PRAGMA foreign_keys');
      const busy = await k.raw<Array<{ timeout: number }>>('PRAGMA busy_timeout');
      expect(mode[0].journal_mode).to.equal('wal');
      expect(sync[0].synchronous).to.equal(1);
      expect(fk[0].foreign_keys).to.equal(1);
      expect(busy[0].timeout).to.be.at.least(1000);
    });

    it('lets a second process-like connection write while the first holds the file', async function () {
      const other = openStore(db().options);
      try {
        await Promise.all([
          createProject({ store: other, clock: systemClock }, { name: 'from-other' }),
          createProject(deps(), { name: 'from-first' }),
        ]);
        expect((await listProjects(deps())).map((p) => p.name)).to.include.members(['from-other', 'from-first']);
      } finally {
        await other.close();
      }
    });

    it('with background checkpoints, copies commits into the database file itself, and checkpoints in a commit only past the WAL bound', async function () {
      const fresh = freshSqlite({ backgroundCheckpoints: true });
      const { store } = fresh;
      const dir = fresh.options.dataDir!;
      try {
        await store.migrateLatest();
        const bound = await store.knex.raw<Array<{ wal_autocheckpoint: number }>>('PRAGMA wal_autocheckpoint');
        expect(bound[0].wal_autocheckpoint).to.equal(WAL_BOUND_PAGES);
        // far below the bound and SQLite's own 1,000 pages: only the checkpointer thread copies these
        await createProject({ store, clock: systemClock }, { name: 'checkpointed' });
        // the database file alone, without its WAL, holds the project once a checkpoint has run
        const inFile = () => {
          copyFileSync(join(dir, 'posthorn.sqlite'), join(dir, 'copy.sqlite'));
          let copy: Database.Database | null = null;
          try {
            copy = new Database(join(dir, 'copy.sqlite'), { readonly: true });
            return (
              copy.prepare("select count(*) as n from projects where name = 'checkpointed'").get() as { n: number }
            ).n;
          } catch {
            // before the first checkpoint even the schema is only in the WAL, and a copy taken
            // while a checkpoint writes the file may be half written: not there yet
            return 0;
          } finally {
            copy?.close();
          }
        };
        const until = Date.now() + 5000;
        while (inFile() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
        expect(inFile()).to.equal(1);
      } finally {
        await fresh.drop();
      }
    });
  }
});
