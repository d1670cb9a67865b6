import { expect } from 'chai';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS } from '../../migrations/index.js';
import { client } from '../helpers/http.js';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

const KEY = /ph_test_[A-Za-z0-9]{40}/;
const SIM = 'simulator.posthorn.test';
const errorOf = (stderr: string) => JSON.parse(stderr).error as { code: string; message: string };

describe('posthorn backup and restore (issue 23)', function () {
  this.timeout(90_000);
  let source: { dir: string; path: string };
  let server: ServeProcess;
  let key: string;
  let backups: string;
  const cli = (path: string, args: string[]) => runCli([...args, '--config', path, '--json']);
  const projectNames = async (path: string) =>
    ((await cli(path, ['project', 'list'])).json as Array<{ name: string }>).map((p) => p.name);

  before(async function () {
    source = writeConfig({ limits: { requests_per_second: 10_000 } });
    server = await startServe(source.path);
    key = server.output().match(KEY)![0];
    backups = tempDir('posthorn-backups-');
  });
  after(async function () {
    await server.stop();
  });

  it('copies the database while serve runs and writes; a fresh data dir restored from the copy has what was stored before it', async function () {
    expect((await cli(source.path, ['project', 'create', '--name', 'before-backup'])).code).to.equal(0);
    const api = client(server.baseUrl, key);
    const send = async () =>
      (await api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 's', text: 't' })).body
        .id as string;
    const before = [await send(), await send()];
    // sends keep arriving, one after another, for as long as the backup runs
    let writing = true;
    let during = 0;
    const writer = (async () => {
      while (writing) {
        await send();
        during++;
      }
    })();
    const file = join(backups, 'live.sqlite');
    const r = await cli(source.path, ['backup', file]);
    writing = false;
    await writer;
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.deep.include({ file, migrations: MIGRATIONS.length });
    expect(r.json.bytes).to.equal(statSync(file).size);
    expect(during, 'sends accepted while the backup ran').to.be.greaterThan(0);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(readdirSync(backups)).to.deep.equal(['live.sqlite']);

    const target = writeConfig();
    const restored = await cli(target.path, ['restore', file]);
    expect(restored.code, restored.stderr).to.equal(0);
    expect(restored.json).to.deep.include({
      restored_from: file,
      database: join(target.dir, 'data', 'posthorn.sqlite'),
      replaced_kept_as: null,
      migrations: MIGRATIONS.length,
      pending: [],
    });
    expect(await projectNames(target.path)).to.include.members(['default', 'before-backup']);
    for (const id of before) expect((await cli(target.path, ['queue', 'show', id])).json, id).to.include({ id });
    // the restored appliance serves with the keys of the one backed up
    const copy = await startServe(target.path);
    try {
      expect(copy.output()).to.not.match(KEY);
      for (const id of before)
        expect((await client(copy.baseUrl, key).get(`/v1/emails/${id}`)).status, id).to.equal(200);
    } finally {
      await copy.stop();
    }
  });

  it('refuses to overwrite a file unless --force', async function () {
    const file = join(backups, 'twice.sqlite');
    expect((await cli(source.path, ['backup', file])).code).to.equal(0);
    const again = await cli(source.path, ['backup', file]);
    expect(again.code).to.not.equal(0);
    expect(again.stdout).to.equal('');
    expect(errorOf(again.stderr)).to.deep.equal({
      code: 'conflict',
      message: `${file} exists; give --force to replace it`,
    });
    const forced = await runCli(['backup', '--force', file, '--json', '--config', source.path]);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
  });

  it('says there is nothing to back up on a data dir without a database', async function () {
    const empty = writeConfig();
    const r = await cli(empty.path, ['backup', join(backups, 'none.sqlite')]);
    expect(r.code).to.not.equal(0);
    expect(errorOf(r.stderr).code).to.equal('not_found');
    expect(existsSync(join(backups, 'none.sqlite'))).to.equal(false);
  });

  it('refuses to restore while serve runs on the data dir', async function () {
    const file = join(backups, 'for-running.sqlite');
    expect((await cli(source.path, ['backup', file])).code).to.equal(0);
    const r = await cli(source.path, ['restore', file]);
    expect(r.code).to.not.equal(0);
    const err = errorOf(r.stderr);
    expect(err.code).to.equal('conflict');
    expect(err.message).to.include('posthorn serve is running');
    expect(readdirSync(join(source.dir, 'data')).filter((f) => f.includes('before-restore'))).to.deep.equal([]);
    expect((await client(server.baseUrl, key).get('/v1/emails')).status).to.equal(200);
  });

  it('keeps the replaced database aside, with nothing of its WAL left beside the restored one', async function () {
    const file = join(backups, 'aside.sqlite');
    expect((await cli(source.path, ['backup', file])).code).to.equal(0);
    const target = writeConfig();
    expect((await cli(target.path, ['project', 'create', '--name', 'only-in-the-old-one'])).code).to.equal(0);
    const r = await cli(target.path, ['restore', file]);
    expect(r.code, r.stderr).to.equal(0);
    const aside = r.json.replaced_kept_as as string;
    expect(aside).to.match(/posthorn\.sqlite\.before-restore-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    const files = readdirSync(join(target.dir, 'data'));
    expect(files).to.not.include.members(['posthorn.sqlite-wal', 'posthorn.sqlite-shm', 'posthorn.sqlite.restoring']);
    const old = new Database(aside, { readonly: true });
    try {
      expect(old.prepare("SELECT name FROM projects WHERE name = 'only-in-the-old-one'").all()).to.have.length(1);
    } finally {
      old.close();
    }
    expect(await projectNames(target.path)).to.not.include('only-in-the-old-one');
    expect(await projectNames(target.path)).to.include('before-backup');
  });

  it("restores a plain copy of a stopped appliance's database file, leaving nothing but the database beside it", async function () {
    const stopped = writeConfig();
    expect((await cli(stopped.path, ['project', 'create', '--name', 'copied-by-hand'])).code).to.equal(0);
    const file = join(backups, 'copied.sqlite');
    copyFileSync(join(stopped.dir, 'data', 'posthorn.sqlite'), file);
    const target = writeConfig();
    const r = await cli(target.path, ['restore', file]);
    expect(r.code, r.stderr).to.equal(0);
    expect(readdirSync(join(target.dir, 'data')).sort()).to.deep.equal(['posthorn.lock', 'posthorn.sqlite']);
    expect(await projectNames(target.path)).to.include('copied-by-hand');
  });

  it("refuses a file that is not a database, or a SQLite database that is not Posthorn's, and leaves the data dir as it was", async function () {
    const text = join(backups, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(200));
    const foreign = join(backups, 'foreign.sqlite');
    const db = new Database(foreign);
    db.exec('CREATE TABLE things (id INTEGER)');
    db.close();
    const target = writeConfig();
    const notDb = await cli(target.path, ['restore', text]);
    expect(notDb.code).to.not.equal(0);
    expect(errorOf(notDb.stderr)).to.include({ code: 'validation_error' });
    expect(errorOf(notDb.stderr).message).to.include('is not a SQLite database');
    const notOurs = await cli(target.path, ['restore', foreign]);
    expect(errorOf(notOurs.stderr).message).to.include('has no knex_migrations table');
    expect(readdirSync(join(target.dir, 'data'))).to.deep.equal(['posthorn.lock']);
    expect(errorOf((await cli(target.path, ['restore', join(backups, 'missing.sqlite')])).stderr).code).to.equal(
      'not_found',
    );
  });

  it('on PostgreSQL refuses both and names pg_dump and pg_restore, without the password', async function () {
    const pg = writeConfig({ database: { client: 'pg', url: 'postgres://posthorn:s3cret@127.0.0.1:1/posthorn' } });
    const backup = await cli(pg.path, ['backup', join(backups, 'pg.dump')]);
    expect(backup.code).to.not.equal(0);
    expect(errorOf(backup.stderr).code).to.equal('unsupported');
    expect(errorOf(backup.stderr).message).to.include(
      `pg_dump --format=custom --file=${join(backups, 'pg.dump')} 'postgres://posthorn@127.0.0.1:1/posthorn'`,
    );
    const restore = await cli(pg.path, ['restore', join(backups, 'pg.dump')]);
    expect(errorOf(restore.stderr).message).to.include('pg_restore --clean --if-exists --no-owner');
    expect(backup.stderr + restore.stderr).to.not.include('s3cret');
  });
});
