import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../src/lib/errors.js';
import { isStorageFull, isStorageRefusal } from '../../src/lib/storage-full.js';
import { LOG_EVERY_MS, QUIET_MS, STORAGE_FULL_MARKER, StorageState } from '../../src/store/storage-state.js';
import { tempDir } from '../helpers/temp-dir.js';

/** An error as each layer reports a full disk. */
const sqliteFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const pgDiskFull = () => Object.assign(new Error('could not extend file'), { code: '53100' });

function world() {
  const clock = { now: 1_700_000_000_000 };
  const lines: Array<{ level: 'error' | 'info'; msg: string; fields: Record<string, unknown> }> = [];
  const logger = {
    error: (fields: object, msg: string) =>
      lines.push({ level: 'error', msg, fields: fields as Record<string, unknown> }),
    info: (fields: object, msg: string) =>
      lines.push({ level: 'info', msg, fields: fields as Record<string, unknown> }),
  };
  const dir = tempDir('posthorn-storage-state-');
  const state = (shared?: SharedArrayBuffer) =>
    new StorageState({ shared, logger, markerDir: dir, now: () => clock.now });
  return { clock, lines, dir, marker: join(dir, STORAGE_FULL_MARKER), state };
}

describe('StorageState (a full disk is a state, not an error per request)', function () {
  context('when a write fails for lack of space', function () {
    it('turns SQLITE_FULL and SQLSTATE 53100 into 503 storage_full with Retry-After in whole seconds', function () {
      const w = world();
      const s = w.state();
      for (const e of [sqliteFull(), pgDiskFull()]) {
        const err = s.refusal(e);
        expect(err).to.be.instanceOf(ApiError);
        expect(err).to.include({ status: 503, code: 'storage_full' });
        expect((err as ApiError).message).to.match(/storage is full; nothing was stored; retry later/);
        expect((err as ApiError).headers['Retry-After']).to.match(/^[1-9]\d*$/);
        expect(isStorageRefusal(err)).to.equal(true);
      }
    });

    it('remembers since when, and leaves its marker in data_dir for posthorn doctor', function () {
      const w = world();
      const s = w.state();
      const since = w.clock.now;
      s.refusal(sqliteFull());
      w.clock.now += 3000;
      s.refusal(sqliteFull());
      expect(s.fullSince()).to.equal(since);
      expect(existsSync(w.marker)).to.equal(true);
    });

    it('logs at error once a minute however many writes fail, across the threads that share it', function () {
      const w = world();
      const api = w.state();
      const background = w.state(api.buffer);
      for (let i = 0; i < 50; i++) {
        (i % 2 ? api : background).refusal(sqliteFull());
        w.clock.now += 1000;
      }
      // 50 s of refusals: one line
      expect(w.lines.filter((l) => l.level === 'error')).to.have.length(1);
      w.clock.now += LOG_EVERY_MS;
      api.refusal(sqliteFull());
      const errors = w.lines.filter((l) => l.level === 'error');
      expect(errors).to.have.length(2);
      expect(errors[0].msg).to.match(/storage is full/);
      expect(errors[0].fields).to.have.property('full_since');
    });
  });

  context('when a write fails for another reason', function () {
    it('gives the error back as it is and sets nothing', function () {
      const w = world();
      const s = w.state();
      const other = Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
      expect(s.refusal(other)).to.equal(other);
      expect(s.fullSince()).to.equal(null);
      expect(existsSync(w.marker)).to.equal(false);
      expect(w.lines).to.deep.equal([]);
    });
  });

  context('when writes succeed again', function () {
    it('stays full while a write failed for space less than QUIET_MS ago (a small write may fit on a full disk)', function () {
      const w = world();
      const s = w.state();
      s.refusal(sqliteFull());
      w.clock.now += QUIET_MS - 1;
      s.wrote();
      expect(s.fullSince()).to.not.equal(null);
    });

    it('ends at the first write after QUIET_MS without a refusal: says so once, removes the marker, and logs at once if it fills again', function () {
      const w = world();
      const api = w.state();
      const background = w.state(api.buffer);
      api.refusal(sqliteFull());
      w.clock.now += QUIET_MS;
      background.wrote();
      api.wrote();
      expect(api.fullSince()).to.equal(null);
      expect(existsSync(w.marker)).to.equal(false);
      expect(w.lines.filter((l) => l.level === 'info').map((l) => l.msg)).to.deep.equal([
        'the storage takes writes again',
      ]);
      w.clock.now += 1000;
      background.refusal(sqliteFull());
      expect(w.lines.filter((l) => l.level === 'error')).to.have.length(2);
    });
  });

  it('the first state of a process removes a marker a stopped process left; a thread joining it does not', function () {
    const w = world();
    writeFileSync(w.marker, '');
    const first = w.state();
    expect(existsSync(w.marker)).to.equal(false);
    first.refusal(sqliteFull());
    w.state(first.buffer);
    expect(existsSync(w.marker)).to.equal(true);
  });
});

describe("isStorageFull (each layer's word for a full disk)", function () {
  const coded = (code: string, extra: object = {}) => Object.assign(new Error(code), { code, ...extra });
  it('knows ENOSPC, EDQUOT, SQLITE_FULL, SQLITE_IOERR_SHMSIZE and SQLSTATE 53100, also wrapped as a cause', function () {
    for (const code of ['ENOSPC', 'EDQUOT', 'SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', '53100'])
      expect(isStorageFull(coded(code)), code).to.equal(true);
    expect(isStorageFull(new Error('the commit could not be made durable', { cause: coded('ENOSPC') }))).to.equal(true);
    expect(isStorageFull(Object.assign(new Error('write'), { errno: -28 }))).to.equal(true);
  });
  it('refuses the rest: other I/O errors, other SQLSTATEs, the API error itself (isStorageRefusal takes that)', function () {
    for (const code of ['EIO', 'SQLITE_IOERR_FSYNC', 'SQLITE_BUSY', '53200', '40001'])
      expect(isStorageFull(coded(code)), code).to.equal(false);
    const refusal = new StorageState().refusal(coded('SQLITE_FULL'));
    expect(isStorageFull(refusal)).to.equal(false);
    expect(isStorageRefusal(refusal)).to.equal(true);
  });
});
