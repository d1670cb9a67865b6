import { expect } from 'chai';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startAppliance, type Appliance } from '../../src/main.js';
import { lockDataDir } from '../../src/store/data-dir-lock.js';
import { openStore } from '../../src/store/store.js';
import { startServe, writeConfig } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;
const octal = (mode: number) => `0${mode.toString(8)}`;

/** every entry of the data folder with its mode, as `name 0600` */
const modesIn = (dir: string) =>
  readdirSync(dir)
    .sort()
    .map((name) => `${name} ${octal(modeOf(join(dir, name)))}`);

const DATABASE_FILES = [
  'posthorn.sqlite 0600',
  'posthorn.sqlite-wal 0600',
  'posthorn.sqlite-shm 0600',
  'posthorn.lock 0600',
];

/** `posthorn serve`'s start (startAppliance) in this process, whose umask the test sets, on loopback ports the system picks */
function startOn(dataDir: string): Promise<Appliance> {
  // an object each: the config's defaults are filled into them
  const loopback = () => ({ host: '127.0.0.1', port: 0 });
  const config = buildConfig(
    {
      data_dir: dataDir,
      http: loopback(),
      smtp: { inbound: loopback(), submission: loopback() },
      log: { level: 'silent' },
    },
    null,
  );
  return startAppliance(config, silentLogger());
}

// The database holds DKIM private keys and webhook secrets: nothing in data_dir is for another local user.
describe('data_dir permissions', function () {
  this.timeout(60_000);
  let umask: number;
  // a permissive umask, as many systems have: modes left to mkdir and SQLite's defaults would come out 0755 and 0644
  beforeEach(function () {
    umask = process.umask(0o022);
  });
  afterEach(function () {
    process.umask(umask);
  });

  it('creates data_dir 0700 and the database, its -wal and -shm and the lock file 0600 on the first start', async function () {
    const data = join(tempDir('posthorn-modes-'), 'data');
    const app = await startOn(data);
    try {
      expect(app.firstStart, 'a first start').to.not.equal(null);
      expect(octal(modeOf(data))).to.equal('0700');
      const entries = modesIn(data);
      expect(entries).to.include.members(DATABASE_FILES);
      expect(
        entries.filter((e) => !e.endsWith(' 0600')),
        'files of another mode',
      ).to.deep.equal([]);
    } finally {
      await app.stop();
    }
  });

  it('tightens the data_dir, database, -wal and -shm an older version left readable by others', async function () {
    // the older version: the built `posthorn serve`, killed so that its -wal and -shm stay behind with their content
    const { dir, path } = writeConfig();
    const data = join(dir, 'data');
    const older = await startServe(path);
    await older.stop('SIGKILL');
    chmodSync(data, 0o755);
    for (const name of readdirSync(data)) chmodSync(join(data, name), 0o644);
    expect(modesIn(data)).to.include.members([
      'posthorn.sqlite 0644',
      'posthorn.sqlite-wal 0644',
      'posthorn.sqlite-shm 0644',
    ]);
    expect(
      statSync(join(data, 'posthorn.sqlite-wal')).size,
      'a WAL with content, which SQLite itself leaves as it is',
    ).to.be.above(0);

    // what every start on SQLite opens first (startAppliance: lockDataDir, then openStore); the CLI's commands open the store alike
    const unlock = lockDataDir(data);
    const store = openStore({ client: 'sqlite', dataDir: data });
    try {
      expect(await store.pendingMigrations()).to.deep.equal([]);
      expect(octal(modeOf(data))).to.equal('0700');
      const entries = modesIn(data);
      expect(entries).to.include.members(DATABASE_FILES);
      expect(
        entries.filter((e) => !e.endsWith(' 0600')),
        'files of another mode',
      ).to.deep.equal([]);
    } finally {
      await store.close();
      unlock();
    }
  });
});
