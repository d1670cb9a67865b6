import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isStorageFull, storageFull } from '../lib/storage-full.js';

/**
 * A full disk as a state of the process rather than an error of each
 * request: since when writes fail for lack of space, so that /readyz can say
 * "not ready" and the log says it once a minute instead of once a request.
 * Nothing waits on it: every write is still tried, so writes resume by
 * themselves as soon as they fit again.
 *
 * The state lives in shared memory, one for the threads of a process (the API
 * thread and the background thread of `serve` both write, to the same disk):
 * the store sets it where a write fails (store.ts, group-commit.ts) and
 * clears it where one succeeds, a load of one cell on that path.
 *
 * A write that succeeds clears it only once no write has failed for space
 * for QUIET_MS: on SQLite a small write may still fit, in WAL space a failed
 * larger commit left behind, while the disk is full; it must not make the
 * appliance look ready between two refusals.
 */

// slots of the shared BigInt64Array: epoch milliseconds, 0 for none
const FULL_SINCE = 0;
const LAST_REFUSAL = 1;
const LAST_LOGGED = 2;
const SLOTS = 3;

/** How long writes must not have failed for space before one that succeeds counts as "writable again". */
export const QUIET_MS = 5_000;
/** The error log line is repeated at most this often while the storage stays full. */
export const LOG_EVERY_MS = 60_000;
/**
 * Free space under data_dir that ends the state on SQLite when no write comes
 * to end it (a load balancer stops sending to an appliance that is not ready):
 * room for the WAL to grow and a checkpoint to copy it.
 */
export const RESUME_FREE_BYTES = 16 * 1024 ** 2;

/**
 * A file in data_dir while the state lasts, for `posthorn doctor`, which runs
 * in another process: its mtime is when the writes began to fail. An empty
 * file needs no free block, so it can be made on a full disk too (if not,
 * the doctor sees the free space).
 */
export const STORAGE_FULL_MARKER = 'posthorn.storage-full';

/** The logger's two methods used here (the store layer does not import log/). */
export interface StorageLogger {
  error(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
}

export interface StorageStateOptions {
  /** another thread's `buffer`: the state of the whole process (none: this one starts it) */
  shared?: SharedArrayBuffer | undefined;
  logger?: StorageLogger | undefined;
  /** data_dir, where the marker goes; none: no marker */
  markerDir?: string | undefined;
  now?: () => number;
}

export class StorageState {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: BigInt64Array;
  private readonly now: () => number;

  constructor(private readonly o: StorageStateOptions = {}) {
    this.buffer = o.shared ?? new SharedArrayBuffer(SLOTS * 8);
    this.cells = new BigInt64Array(this.buffer);
    this.now = o.now ?? Date.now;
    // the process's first: a marker left by a process that stopped while full says nothing of this one
    if (!o.shared) this.unmark();
  }

  /**
   * The error to throw for a write that failed: storage_full when it failed
   * for lack of space (the state is set, and logged at most once a minute),
   * else `e` itself.
   */
  refusal(e: unknown): unknown {
    if (!isStorageFull(e)) return e;
    const now = this.now();
    const t = BigInt(now);
    if (Atomics.compareExchange(this.cells, FULL_SINCE, 0n, t) === 0n) this.mark();
    Atomics.store(this.cells, LAST_REFUSAL, t);
    const logged = Atomics.load(this.cells, LAST_LOGGED);
    if (
      now - Number(logged) >= LOG_EVERY_MS &&
      Atomics.compareExchange(this.cells, LAST_LOGGED, logged, t) === logged
    ) {
      const since = new Date(Number(Atomics.load(this.cells, FULL_SINCE))).toISOString();
      this.o.logger?.error(
        { err: e, full_since: since },
        'the storage is full: writes are refused (HTTP 503 storage_full, SMTP 452 4.3.1) until space is freed; nothing acknowledged is lost',
      );
    }
    return storageFull();
  }

  /** A write succeeded (the hot path: one load while the storage is not full). */
  wrote(): void {
    if (Atomics.load(this.cells, FULL_SINCE) === 0n || !this.quiet()) return;
    this.clear();
  }

  /** Since when writes fail for lack of space (epoch ms), or null. */
  fullSince(): number | null {
    const since = Atomics.load(this.cells, FULL_SINCE);
    return since === 0n ? null : Number(since);
  }

  /** No write has failed for space for QUIET_MS. */
  quiet(): boolean {
    return this.now() - Number(Atomics.load(this.cells, LAST_REFUSAL)) >= QUIET_MS;
  }

  /** Ends the state (of several threads ending it at once, one logs it). */
  clear(): void {
    const since = Atomics.load(this.cells, FULL_SINCE);
    if (since === 0n || Atomics.compareExchange(this.cells, FULL_SINCE, since, 0n) !== since) return;
    Atomics.store(this.cells, LAST_LOGGED, 0n);
    this.unmark();
    this.o.logger?.info(
      { full_for_s: Math.round((this.now() - Number(since)) / 1000) },
      'the storage takes writes again',
    );
  }

  private mark(): void {
    if (!this.o.markerDir) return;
    try {
      const fd = openSync(join(this.o.markerDir, STORAGE_FULL_MARKER), 'w', 0o600);
      try {
        writeSync(
          fd,
          'posthorn serve: writes fail for lack of space since this file was made; it goes once one succeeds\n',
        );
      } catch {
        // an empty marker says as much
      } finally {
        closeSync(fd);
      }
    } catch {
      // no room even for a name: posthorn doctor reads the free space all the same
    }
  }

  private unmark(): void {
    if (!this.o.markerDir) return;
    try {
      unlinkSync(join(this.o.markerDir, STORAGE_FULL_MARKER));
    } catch {
      // none there (ENOENT), or data_dir not made yet
    }
  }
}
