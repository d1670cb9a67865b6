import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { WalSyncer } from '../../src/store/wal-sync.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Records when each fsync starts and lets the test finish it. */
class ObservedSyncer extends WalSyncer {
  readonly started: Array<() => void> = [];
  protected override fsync(): Promise<void> {
    return new Promise((resolve) => this.started.push(resolve));
  }
}

const execFileAsync = promisify(execFile);

/** How the strace children begin: their arguments, WalSyncer, and a SQLite database that syncs nothing itself (synchronous=OFF). */
const CHILD_HEAD = `
  const [dir, syncer] = process.argv.slice(1);
  const { default: Database } = await import('better-sqlite3');
  const { fsyncSync, openSync } = await import('node:fs');
  const { WalSyncer } = await import(syncer);
  const openSyncingNothing = () => {
    const db = new Database(dir + '/posthorn.sqlite');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    return db;
  };
`;

/** The paths a child process running `script` (an ES module, with `args`) fsyncs, in order, as strace sees them. */
async function syncsOf(script: string, args: string[], trace: string): Promise<string[]> {
  await execFileAsync(
    'strace',
    [
      '-f',
      '-y',
      '-qq',
      '-e',
      'trace=fsync,fdatasync',
      '-o',
      trace,
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
      ...args,
    ],
    { cwd: PACKAGE_ROOT },
  );
  return readFileSync(trace, 'utf8')
    .split('\n')
    .map((line) => /\b(?:fsync|fdatasync)\(\d+<([^>]+)>\) += 0/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);
}
const tick = () => new Promise((r) => setImmediate(r));

describe('WalSyncer (durable commits without blocking the event loop)', function () {
  it('never resolves a caller with an fsync that started before its call', async function () {
    const s = new ObservedSyncer('/nonexistent');
    const order: string[] = [];
    const a = s.sync().then(() => order.push('a'));
    await tick();
    expect(s.started).to.have.length(1);
    // b and c commit while the first fsync runs: it may not cover them
    const b = s.sync().then(() => order.push('b'));
    const c = s.sync().then(() => order.push('c'));
    s.started[0]();
    await a;
    await tick();
    expect(order).to.deep.equal(['a']);
    // one more fsync serves both of them
    expect(s.started).to.have.length(2);
    s.started[1]();
    await Promise.all([b, c]);
    expect(order).to.deep.equal(['a', 'b', 'c']);
    expect(s.started).to.have.length(2);
  });

  it('fsyncs the WAL a commit wrote to (seen by strace in a child process), and treats a missing one as nothing to sync', async function () {
    const dir = realpathSync(tempDir('posthorn-wal-'));
    const trace = join(dir, 'trace');
    // SQLite with synchronous=OFF never fsyncs on its own; the fsync of marker is where sync() begins
    const child = `${CHILD_HEAD}
      const db = openSyncingNothing();
      db.exec('CREATE TABLE t (v TEXT)');
      db.prepare('INSERT INTO t VALUES (?)').run('committed');
      fsyncSync(openSync(dir + '/marker', 'w'));
      await new WalSyncer(dir + '/posthorn.sqlite-wal').sync();
      process.exit(0);
    `;
    const syncer = new URL('../../src/store/wal-sync.ts', import.meta.url).href;
    const synced = await syncsOf(child, [dir, syncer], trace);
    const seen = `fsyncs seen: ${synced.join(', ')}`;
    const marker = synced.indexOf(join(dir, 'marker'));
    expect(marker, seen).to.be.at.least(0);
    // nothing synced the WAL before sync() was called, and sync() did
    expect(synced.slice(0, marker), seen).to.not.include(join(dir, 'posthorn.sqlite-wal'));
    expect(synced.slice(marker + 1), seen).to.include(join(dir, 'posthorn.sqlite-wal'));

    await new WalSyncer(join(dir, 'missing-wal')).sync();
  });

  it("syncs a WAL's directory before the WAL, the first time it syncs that file and again for a WAL made anew (strace)", async function () {
    const dir = realpathSync(tempDir('posthorn-wal-'));
    const trace = join(dir, 'trace');
    // SQLite with synchronous=OFF syncs nothing, its directory included; closing deletes the WAL, and the
    // next connection makes a new one. The fsyncs of the markers say where each sync() begins.
    const child = `${CHILD_HEAD}
      const wal = new WalSyncer(dir + '/posthorn.sqlite-wal');
      for (const round of [1, 2]) {
        const db = openSyncingNothing();
        db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');
        db.prepare('INSERT INTO t VALUES (?)').run('round ' + round);
        fsyncSync(openSync(dir + '/marker' + round, 'w'));
        await wal.sync();
        db.close();
      }
      process.exit(0);
    `;
    const syncer = new URL('../../src/store/wal-sync.ts', import.meta.url).href;
    const synced = await syncsOf(child, [dir, syncer], trace);
    const seen = `fsyncs seen: ${synced.join(', ')}`;
    const walPath = join(dir, 'posthorn.sqlite-wal');
    for (const round of [1, 2]) {
      const from = synced.indexOf(join(dir, `marker${round}`));
      const part = synced.slice(from + 1, round === 1 ? synced.indexOf(join(dir, 'marker2')) : undefined);
      expect(from, seen).to.be.at.least(0);
      const firstWal = part.indexOf(walPath);
      expect(firstWal, seen).to.be.at.least(0);
      expect(part.slice(0, firstWal), seen).to.include(dir);
    }
  });

  it('makes a new data directory durable by name: each directory made for it is synced into its parent before the store commits (strace)', async function () {
    const dir = realpathSync(tempDir('posthorn-wal-'));
    const data = join(dir, 'new', 'data');
    const child = `
      const [data, marker, storeModule] = process.argv.slice(1);
      const { fsyncSync, openSync } = await import('node:fs');
      const { openStore } = await import(storeModule);
      const store = openStore({ client: 'sqlite', dataDir: data });
      await store.migrateLatest();
      fsyncSync(openSync(marker, 'w'));
      await store.close();
      process.exit(0);
    `;
    const storeModule = new URL('../../src/store/store.ts', import.meta.url).href;
    const synced = await syncsOf(child, [data, join(dir, 'marker'), storeModule], join(dir, 'trace'));
    const seen = `fsyncs seen: ${synced.join(', ')}`;
    const beforeCommit = synced.slice(0, synced.indexOf(join(data, 'posthorn.sqlite-wal')));
    expect(beforeCommit, seen).to.include.members([dir, join(dir, 'new')]);
  });

  it('follows the WAL at its path: a WAL deleted and made again is the one synced, and close lets go of it', async function () {
    const dir = tempDir('posthorn-wal-');
    const wal = join(dir, 'x-wal');
    // the descriptors of this process open on that path (Linux names deleted files "path (deleted)")
    const open = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((l) => l.startsWith(wal));
    writeFileSync(wal, 'frames');
    const s = new WalSyncer(wal);
    await s.sync();
    expect(open()).to.deep.equal([wal]);
    // SQLite removes the WAL when its last connection closes and makes a new one later
    rmSync(wal);
    writeFileSync(wal, 'new frames');
    await s.sync();
    expect(open()).to.deep.equal([wal]);
    rmSync(wal);
    await s.sync();
    expect(open()).to.deep.equal([]);
    writeFileSync(wal, 'again');
    await s.sync();
    await s.close();
    expect(open()).to.deep.equal([]);
  });

  it('after one failed fsync, no later sync reports durable (a lost write may not be reported twice)', async function () {
    let calls = 0;
    class FailingOnce extends WalSyncer {
      protected override fsync(): Promise<void> {
        calls++;
        return calls === 1 ? Promise.reject(new Error('EIO: i/o error')) : Promise.resolve();
      }
    }
    const s = new FailingOnce('/nonexistent');
    await s.sync().then(
      () => expect.fail('the failed fsync was reported durable'),
      (e: Error) => expect(e.message).to.include('EIO'),
    );
    // the next fsync would succeed, but what the failed one lost would not be on disk
    const later = (await s.sync().catch((e: unknown) => e)) as Error;
    expect(later).to.be.instanceOf(Error);
    expect(later.message).to.match(/earlier fsync of the WAL failed \(EIO/);
    expect(calls).to.equal(1);
  });

  it('a sync after close opens the WAL for itself and lets go of it again', async function () {
    const dir = tempDir('posthorn-wal-');
    const wal = join(dir, 'x-wal');
    const open = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === wal;
        } catch {
          return false;
        }
      });
    writeFileSync(wal, 'frames');
    const s = new WalSyncer(wal);
    await s.sync();
    await s.close();
    expect(open()).to.deep.equal([]);
    await s.sync();
    expect(open()).to.deep.equal([]);
  });
});
