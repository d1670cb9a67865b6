import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { startServe, writeConfig } from '../helpers/process.js';

/** The names of a process's threads, as `top -H` and `ps -L` show them (Linux /proc). */
function threadNames(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
}

describe('posthorn serve names its threads', function () {
  it('so that top -H and the bench tell the background, signing, fsync and checkpoint threads apart', async function () {
    const app = await startServe(writeConfig().path);
    try {
      const names = threadNames(app.child.pid!);
      // (the parsing threads, ph-parsing, start with the first untrusted input they are given)
      for (const name of ['ph-background', 'ph-signing', 'ph-wal-sync', 'ph-checkpoint'])
        expect(names, `the threads of serve: ${names.join(', ')}`).to.include(name);
      // the main thread keeps the process's own name: ps, pgrep and systemd see the process as before
      expect(readFileSync(`/proc/${app.child.pid!}/comm`, 'utf8').trim()).to.equal('node');
    } finally {
      await app.stop();
    }
  });
});
