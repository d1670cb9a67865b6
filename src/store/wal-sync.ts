import { closeSync, fsync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../lib/thread.js';
import { WalFile } from './wal-file.js';

/**
 * Durable commits on SQLite without blocking the event loop.
 *
 * better-sqlite3 runs every statement on the calling thread, so with
 * `synchronous=FULL` each COMMIT waits there for an fsync of the WAL: the
 * whole process stands still for it (1–2 ms per commit here, a third of the
 * time of an accept burst). The writer connection runs `synchronous=NORMAL`
 * instead, where a COMMIT only writes its WAL frames, and `Store.tx` then
 * waits for an fsync of the WAL file that this syncer runs on libuv's thread
 * pool before it resolves. A transaction is reported committed only once
 * its frames are on disk, exactly as with FULL; what changes is that the
 * event loop keeps serving meanwhile and that one fsync covers every commit
 * made before it started (group commit).
 *
 * Why this is as safe as FULL: the WAL is append-only and each frame is
 * checksummed in a chain, so after a power loss SQLite replays frames up to
 * the last intact commit and drops any torn tail. Frames a caller was told
 * about were fsynced after they were written, so they are never in that tail.
 * Checkpoints (NORMAL syncs the WAL before and the database after each) keep
 * what they copy durable.
 */
/** An fsync failure's message (fs fails with an Error; anything else as text). */
const messageOf = (e: unknown): string => (e as Error | null)?.message ?? String(e);

export class WalSyncer {
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  /**
   * The first fsync that failed. Linux may report a lost write once and let a later fsync succeed
   * without it, so after one failure nothing written since can be called durable: every later
   * sync fails too, until a restart lets SQLite check the WAL again.
   */
  private failure: unknown = null;
  private closed = false;
  private readonly wal: WalFile;

  constructor(walPath: string) {
    this.wal = new WalFile(walPath);
  }

  /** Resolves once everything written to the WAL before this call is on disk. */
  sync(): Promise<void> {
    if (this.failure !== null)
      return Promise.reject(
        new Error(
          `an earlier fsync of the WAL failed (${messageOf(this.failure)}); nothing written since can be reported durable before a restart`,
        ),
      );
    if (!this.inFlight) {
      this.inFlight = this.fsync()
        .catch((e: unknown) => {
          this.failure ??= e;
          throw e;
        })
        .finally(() => {
          this.inFlight = null;
        });
      return this.inFlight;
    }
    // An fsync already running may have started before the caller's commit: wait for the next one.
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.sync();
      });
    return this.queued;
  }

  protected async fsync(): Promise<void> {
    // after close(), a late commit's sync opens the WAL for itself and closes it again
    const own = this.closed;
    const fd = own ? this.wal.openOwn() : this.wal.current();
    if (fd === null) return;
    try {
      await new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
    } finally {
      if (own) closeSync(fd);
    }
  }

  /** Closes the descriptor once no fsync uses it (the store is closing). */
  async close(): Promise<void> {
    this.closed = true;
    await this.queued?.catch(() => undefined);
    await this.inFlight?.catch(() => undefined);
    this.wal.close();
  }
}

/**
 * Copies the WAL into the database file on a thread of its own, so that the
 * checkpoint's writes and fsyncs do not stall the writer's commits (its
 * connection checkpoints itself only past WAL_BOUND_PAGES, store.ts). PASSIVE
 * checkpoints never block the writer; asked for at most every `everyMs` while
 * the store that owns this checkpointer commits: each thread's store that
 * writes needs one of its own.
 */
export class BackgroundCheckpointer {
  private worker: Worker | null;
  private busy = false;
  private dirty = false;
  private last = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    file: string,
    private readonly everyMs = 250,
  ) {
    this.worker = startThread(import.meta.url, 'checkpoint-thread', { workerData: { file } });
    this.worker.unref();
    this.worker.on('message', (m: unknown) => {
      if (m === 'stopped') return;
      this.busy = false;
      if (this.dirty) this.schedule();
    });
    this.worker.on('error', () => {
      // a checkpointer that died leaves the WAL to grow until the next start's checkpoint; commits go on
      this.worker = null;
    });
  }

  /** A commit happened: checkpoint soon. */
  committed(): void {
    this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.worker || this.busy || this.timer) return;
    const wait = Math.max(0, this.last + this.everyMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.worker || this.busy) return;
      this.busy = true;
      this.dirty = false;
      this.last = Date.now();
      this.worker.postMessage('checkpoint');
    }, wait);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    const w = this.worker;
    this.worker = null;
    if (!w) return;
    await new Promise<void>((resolve) => {
      w.on('message', (m: unknown) => {
        if (m === 'stopped') resolve();
      });
      w.on('exit', () => resolve());
      w.postMessage('stop');
    });
    await w.terminate();
  }
}
