import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
let hooked = false;

/**
 * A new folder under the system temp dir, removed when the test process
 * exits (mocha runs with `exit: true`, so 'exit' fires after the last test,
 * passed or failed). For folders whose owner outlives any one test: a serve
 * process's data, a config file several tests read.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}
