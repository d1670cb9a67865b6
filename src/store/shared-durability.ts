import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { startThread } from '../lib/thread.js';

/**
 * Durable commits for the stores of several threads of one process (the API
 * thread and the background thread of `serve`), with one fsync thread
 * between them.
 *
 * A thread that commits counts the commit in shared memory and wakes the
 * fsync thread, which sits blocked on that count: it reads the count, fsyncs
 * the WAL and publishes the count as durable (one fsync covers every commit
 * counted before it started: group commit). Each thread hears of it on a
 * port of its own. Against WalSyncer (wal-sync.ts), whose fsync runs on the
 * committing thread's libuv pool, this saves two waits on the path of an
 * accepted email: the fsync's completion no longer waits for the busy
 * committing thread to take it, and the API thread hears of it directly
 * instead of through that thread. The background thread now sends the
 * stored emails back at COMMIT, with their commit number, and the API
 * thread answers each once that number is durable (accept-relay.ts).
 *
 * The guarantee is WalSyncer's: a commit is reported durable only after an
 * fsync of the WAL that started after the commit had written its frames (a
 * thread counts its commit only once COMMIT has returned). After a failed
 * fsync nothing more is reported durable, on any thread, until a restart.
 */

// slots of the shared BigInt64Array
export const COMMITTED = 0;
export const DURABLE = 1;
export const FAILED = 2;
export const STOP = 3;
/** 1 while the fsync thread sleeps (or is about to) on COMMITTED: only then does a commit need to wake it */
export const WAITING = 4;
const SLOTS = 5;

/** What the fsync thread (wal-sync-thread.ts) starts with, besides one port per committing thread. */
export interface SyncThreadData {
  shared: SharedArrayBuffer;
  walPath: string;
}

/** What another thread needs to take part: the shared counters and its own port from the fsync thread. */
export interface DurabilityLink {
  shared: SharedArrayBuffer;
  port: MessagePort;
}

type Notice = bigint | { failed: string };

/**
 * The fsync thread, owned by the thread that starts the process's stores.
 * `links` are handed one to each thread that commits (in this thread, or
 * sent to another in a transfer list).
 */
export class WalSyncThread {
  readonly links: DurabilityLink[];
  private readonly worker: Worker;
  private readonly counters: BigInt64Array;
  private readonly exited: Promise<void>;

  /** `onError`: the thread died; nothing more can be reported durable (waits on it fail). */
  constructor(walPath: string, threads: number, onError: (e: Error) => void = () => undefined) {
    const shared = new SharedArrayBuffer(SLOTS * 8);
    this.counters = new BigInt64Array(shared);
    const channels = Array.from({ length: threads }, () => new MessageChannel());
    const ports = channels.map((c) => c.port1);
    const data: SyncThreadData & { ports: MessagePort[] } = { shared, walPath, ports };
    this.worker = startThread(import.meta.url, 'wal-sync-thread', { workerData: data, transferList: ports });
    this.worker.unref();
    this.worker.on('error', (e) => {
      Atomics.store(this.counters, FAILED, 1n);
      onError(e);
    });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.links = channels.map((c) => ({ shared, port: c.port2 }));
  }

  /** Syncs what was counted, then ends the thread: call once the stores that commit are closed. */
  async stop(): Promise<void> {
    // an unref'd thread's exit would not keep this one alive long enough to hear of it
    this.worker.ref();
    Atomics.store(this.counters, STOP, 1n);
    // Counted as one more commit: the thread may have read STOP just before and be about to wait
    // on the count it read; a notify alone would come before that wait and be lost.
    Atomics.add(this.counters, COMMITTED, 1n);
    Atomics.notify(this.counters, COMMITTED);
    await this.exited;
  }
}

/** One thread's side: counts its commits and tells when one is durable. */
export class SharedDurability {
  private readonly counters: BigInt64Array;
  private readonly port: MessagePort;
  private waiting: Array<{ seq: bigint; resolve(): void; reject(e: Error): void }> = [];
  private failure: string | null = null;
  /** the fsync thread has ended, or this side was closed */
  private ended = false;

  constructor(link: DurabilityLink) {
    this.counters = new BigInt64Array(link.shared);
    this.port = link.port;
    this.port.on('message', (m: Notice) => this.heard(m));
    this.port.on('close', () => this.abandon());
    // only a thread waiting for an fsync is kept alive by it
    this.port.unref();
  }

  /** Counts a commit that has returned; its number, for whenDurable (here or on another thread). */
  committed(): bigint {
    const seq = Atomics.add(this.counters, COMMITTED, 1n) + 1n;
    // A busy fsync thread looks at the count again before it sleeps: waking it is a futex call
    // that cost the committing thread ~3% of its time under load, and is needed only when it sleeps.
    if (Atomics.load(this.counters, WAITING) !== 0n) Atomics.notify(this.counters, COMMITTED);
    return seq;
  }

  /** Resolves once commit number `seq` is on disk; rejects if an fsync failed. */
  whenDurable(seq: bigint): Promise<void> {
    // a commit synced before an fsync failed is on disk all the same: answering it 500 would invite a resend
    if (Atomics.load(this.counters, DURABLE) >= seq) return Promise.resolve();
    if (Atomics.load(this.counters, FAILED) !== 0n) return Promise.reject(this.failed());
    if (this.ended) return Promise.reject(this.gone());
    return new Promise<void>((resolve, reject) => {
      if (!this.waiting.length) this.port.ref();
      this.waiting.push({ seq, resolve, reject });
    });
  }

  private heard(m: Notice): void {
    if (typeof m === 'bigint') {
      const still = [];
      for (const w of this.waiting) {
        if (w.seq <= m) w.resolve();
        else still.push(w);
      }
      this.waiting = still;
    } else {
      this.failure = m.failed;
      for (const w of this.waiting) w.reject(this.failed());
      this.waiting = [];
    }
    if (!this.waiting.length) this.port.unref();
  }

  private failed(): Error {
    return new Error(
      `an fsync of the WAL failed (${this.failure ?? 'on another thread'}); nothing written since can be reported durable before a restart`,
    );
  }

  /**
   * This thread is done with it: waits until everything counted so far is on disk (or known not to
   * be), so that no commit's wait is cut short by the close itself.
   */
  async close(): Promise<void> {
    await this.whenDurable(Atomics.load(this.counters, COMMITTED)).catch(() => undefined);
    this.port.close();
    this.abandon();
  }

  private abandon(): void {
    this.ended = true;
    for (const w of this.waiting) w.reject(this.gone());
    this.waiting = [];
  }

  private gone(): Error {
    return new Error('the fsync thread stopped before the commit was known to be on disk');
  }
}
