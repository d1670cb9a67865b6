// The entry of a checkpointer thread (wal-sync.ts, BackgroundCheckpointer): copies the WAL into
// the database file when asked, on a connection of its own. Nothing else runs here.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { nameThisThread } from '../log/thread-name.js';

nameThisThread('ph-checkpoint');

const port = parentPort!;
const db = new Database((workerData as { file: string }).file, { timeout: 5000 });
// NORMAL: the WAL is synced before a checkpoint copies it and the database after.
db.pragma('synchronous = NORMAL');

type Pass = { busy: number; log: number; checkpointed: number };

port.on('message', (m: 'checkpoint' | 'stop') => {
  if (m === 'stop') {
    db.close();
    port.postMessage('stopped');
    return;
  }
  let result: Pass | { error: string } | null = null;
  // SQLite starts the WAL over only when a write begins with every frame copied. Under steady
  // commits a pass never gets there (commits land while it copies), but the next pass copies only
  // those few frames and may: up to five passes, until one finds no frame the previous did not.
  try {
    for (let pass = 0, seen = -1; pass < 5; pass++) {
      const r = (db.pragma('wal_checkpoint(PASSIVE)') as Pass[])[0];
      result = r;
      if (r.busy || r.log === seen || r.log !== r.checkpointed) break;
      seen = r.log;
    }
  } catch (e) {
    result = { error: String((e as Error)?.message ?? e) };
  }
  port.postMessage(result);
});
