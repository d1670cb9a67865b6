import type { Knex } from 'knex';
import { WalSyncer, type BackgroundCheckpointer } from './wal-sync.js';
import { WriteLock } from './write-lock.js';
import type { SharedDurability } from './shared-durability.js';
import type { StorageState } from './storage-state.js';
import { sqliteTransactions } from './sqlite-transaction.js';

// How a store's transactions commit: retried on a transient lock conflict,
// one writer at a time across threads, and counted once on disk.

/**
 * A transaction that has committed. `durable` resolves once it is on disk.
 * With a shared fsync thread, `seq` is its commit number: another thread of
 * the process can wait for it too (SharedDurability.whenDurable). Null
 * otherwise: only `durable` tells.
 */
export interface Committed<T> {
  value: T;
  durable: Promise<void>;
  seq: bigint | null;
}

/** What a SQLite store shares with the other threads' stores of its process (StoreOptions). */
export interface SqliteSharing {
  writeLock?: SharedArrayBuffer | undefined;
  durability?: SharedDurability | undefined;
}

/**
 * Transactions that count as committed once they are durable. SQLite commits
 * write the WAL, and count once it is fsynced (wal-sync.ts): by the process's
 * fsync thread when the store shares one, else by a WalSyncer of its own; a
 * shared write lock keeps one writer across threads. `durable(fresh)`: a
 * commit's wait, or (fresh) one for an fsync that starts after the call.
 */
export function committer(
  knex: Knex,
  sqlite: SqliteSharing | null,
  file: string,
  checkpointer: BackgroundCheckpointer | null,
  storage: StorageState,
  onRetry: (reason: TransientReason) => void,
) {
  const shared = sqlite?.durability ?? null;
  const wal = sqlite && !shared ? new WalSyncer(`${file}-wal`) : null;
  const writeLock = sqlite?.writeLock ? new WriteLock(sqlite.writeLock) : null;
  const inTransaction = sqlite
    ? sqliteTransactions(knex)
    : <T>(fn: (trx: Knex.Transaction) => Promise<T>) => transaction(knex, fn);
  const locked = async <T>(run: () => Promise<T>): Promise<T> => {
    if (!writeLock) return run();
    await writeLock.acquire();
    try {
      return await run();
    } finally {
      writeLock.release();
    }
  };
  // seq: the commit's number with a shared fsync thread, counted when COMMIT returned
  const whenDurable = async (seq: bigint | null) => {
    if (shared) await shared.whenDurable(seq!);
    else if (wal) await wal.sync();
    else return;
    checkpointer?.committed();
  };
  const commit = async <T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<Committed<T>> => {
    let value: T;
    try {
      value = await locked(() => withRetry(() => inTransaction(fn), onRetry));
    } catch (e) {
      throw storage.refusal(e);
    }
    storage.wrote();
    const seq = shared?.committed() ?? null;
    return { value, seq, durable: whenDurable(seq) };
  };
  return { commit, wal, durable: (fresh = true) => whenDurable(fresh ? (shared?.committed() ?? null) : null) };
}

/**
 * knex.transaction (PostgreSQL), failing with fn's own error. When a statement fails for
 * space or I/O, SQLite rolls the whole transaction back itself; knex's
 * ROLLBACK then fails ("no transaction is active") and knex reports that
 * instead, which hid every SQLITE_FULL behind a 500.
 */
async function transaction<T>(knex: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  let thrown: { error: unknown } | null = null;
  try {
    return await knex.transaction(async (trx) => {
      try {
        return await fn(trx);
      } catch (error) {
        thrown = { error };
        throw error;
      }
    });
  } catch (e) {
    throw thrown ? (thrown as { error: unknown }).error : e;
  }
}

/** Why a failed transaction may simply run again (it was rolled back whole), or null. */
export type TransientReason = 'deadlock' | 'serialization' | 'busy';

export function transientReason(e: unknown): TransientReason | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === '40P01') return 'deadlock';
  if (code === '40001') return 'serialization';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? 'busy' : null;
}

/**
 * SQLite answers SQLITE_BUSY at once (without waiting on busy_timeout) when a
 * deferred transaction that has read tries to write after another process
 * committed; PostgreSQL reports serialization failures and deadlocks. The
 * transaction was rolled back in each case, so running it again is safe.
 */
async function withRetry<T>(run: () => Promise<T>, onRetry: (reason: TransientReason) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      const reason = transientReason(e);
      if (!reason || attempt >= 8) throw e;
      onRetry(reason);
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
    }
  }
}
