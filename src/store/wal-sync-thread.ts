// The entry of the fsync thread (shared-durability.ts, WalSyncThread): waits for commits to be
// counted, fsyncs the WAL, publishes the count as durable. Nothing else runs here.
import { fsyncSync } from 'node:fs';
import { workerData, type MessagePort } from 'node:worker_threads';
import { WalFile } from './wal-file.js';
import { COMMITTED, DURABLE, FAILED, STOP, WAITING, type SyncThreadData } from './shared-durability.js';
import { nameThisThread } from '../log/thread-name.js';

nameThisThread('ph-wal-sync');

const { shared, ports, walPath } = workerData as SyncThreadData & { ports: MessagePort[] };
const v = new BigInt64Array(shared);
const wal = new WalFile(walPath);
let failure: string | null = null;
let synced = Atomics.load(v, DURABLE);

for (;;) {
  const counted = Atomics.load(v, COMMITTED);
  if (counted === synced) {
    if (Atomics.load(v, STOP) !== 0n) break;
    // Said before the wait, which sleeps only while the count is still `counted`: a commit counted
    // after this store sees it and notifies; one counted before it has changed the count already.
    Atomics.store(v, WAITING, 1n);
    Atomics.wait(v, COMMITTED, counted);
    Atomics.store(v, WAITING, 0n);
    continue;
  }
  // after a failure nothing more is fsynced or reported durable: see WalSyncer.failure
  if (failure === null) {
    try {
      const fd = wal.current();
      if (fd !== null) fsyncSync(fd);
    } catch (e) {
      failure = String((e as Error)?.message ?? e);
      Atomics.store(v, FAILED, 1n);
    }
  }
  synced = counted;
  if (failure === null) Atomics.store(v, DURABLE, counted);
  for (const p of ports) p.postMessage(failure === null ? counted : { failed: failure });
}
wal.close();
for (const p of ports) p.close();
