import type { Knex } from 'knex';
import { sqliteConnectionOf } from './sqlite.js';
import { transientReason } from './durable-commit.js';
import { type Committed, type Store } from './store.js';
import { lockRows } from './db.js';

/**
 * The transaction committed but its commit could not be made durable (the WAL
 * fsync failed): its writes may or may not survive a crash, so running the
 * job again could do its work twice.
 */
export class NotDurableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the commit could not be made durable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'NotDurableError';
  }
}

/** Times a job that lost a deadlock in its savepoint goes again, in the next shared transaction. */
const JOB_RETRIES = 3;

interface Job {
  fn: (trx: Knex.Transaction) => Promise<unknown>;
  /** projects whose rows the job locks: locked for all the batch's jobs at once, first */
  projects?: string[];
  retries?: number;
  resolve: (v: Committed<unknown>) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs many small write transactions as one: jobs that arrive while a commit
 * is under way wait and then share the next one (one fsync for all). Each
 * job runs in its own savepoint, so one failing job rolls back only its own
 * work, and hears of its failure at the commit.
 */
export class GroupCommit {
  private waiting: Job[] = [];
  private running = false;

  constructor(
    private readonly store: Store,
    private readonly maxBatch = 500,
  ) {}

  /**
   * Runs fn in the next shared transaction; resolves once that commit is on disk. `projects`: the
   * projects whose rows fn locks (docs/ARCHITECTURE.md "One lock order"), locked with every other
   * job's at the start of the shared transaction, in id order: two jobs of one transaction locking
   * their projects one after the other would meet another node's in opposite orders.
   */
  run<T>(fn: (trx: Knex.Transaction) => Promise<T>, projects?: string[]): Promise<T> {
    return this.runCommitted(fn, projects).then(({ value, durable }) =>
      durable.then(
        () => value,
        (e: unknown) => Promise.reject(new NotDurableError(e)),
      ),
    );
  }

  /**
   * Like run, but resolves as soon as the shared transaction commits, with
   * `durable` to wait on (and its commit number, for another thread to wait
   * on): for a caller that hands the result on before it answers anyone.
   */
  runCommitted<T>(fn: (trx: Knex.Transaction) => Promise<T>, projects?: string[]): Promise<Committed<T>> {
    return new Promise<Committed<T>>((resolve, reject) => {
      this.waiting.push({ fn, projects, resolve: resolve as (v: Committed<unknown>) => void, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, this.maxBatch);
      const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown; again?: boolean }> = [];
      let durable: Promise<void>;
      let seq: bigint | null;
      try {
        ({ durable, seq } = await this.store.commit(async (trx) => {
          results.length = 0;
          await lockRows(trx, 'projects', [...new Set(batch.flatMap((job) => job.projects ?? []))]);
          // A job alone needs no savepoint: its failure rolls the whole transaction back.
          if (batch.length === 1) {
            results.push({ ok: true, value: await batch[0].fn(trx) });
            return;
          }
          for (const job of batch) {
            try {
              results.push({ ok: true, value: await inSavepoint(trx, job.fn) });
            } catch (error) {
              if (error instanceof TransactionLost) throw error.cause;
              // A deadlock (PostgreSQL) rolled back only the job's savepoint, and the locks it waited
              // for may be this transaction's own: the job goes again once this one has committed.
              const reason = transientReason(error);
              if (reason && (job.retries ?? 0) < JOB_RETRIES) {
                this.store.retried(reason);
                results.push({ ok: false, error, again: true });
                continue;
              }
              // a statement that failed for space, its transaction still open: the job hears storage_full
              results.push({ ok: false, error: this.store.storage.refusal(error) });
            }
          }
        }));
      } catch (e) {
        for (const job of batch) job.reject(e);
        continue;
      }
      // The next batch starts now; each caller watches `durable` itself (run waits for it).
      durable.catch(() => undefined);
      const again: Job[] = [];
      batch.forEach((job, i) => {
        const r = results[i];
        if (r.ok) job.resolve({ value: r.value, durable, seq });
        else if (r.again) again.push({ ...job, retries: (job.retries ?? 0) + 1 });
        else job.reject(r.error);
      });
      this.waiting.unshift(...again);
    }
    this.running = false;
  }
}

/**
 * A job's error took the whole SQLite transaction with it (SQLITE_FULL, an
 * I/O error): nothing of the batch is left to commit, and a later job's
 * SAVEPOINT would silently start a transaction of its own. The batch fails
 * as a whole, so that nothing is reported stored and nothing half stored.
 */
class TransactionLost extends Error {
  constructor(override readonly cause: unknown) {
    super('the transaction was rolled back by the database');
  }
}

/**
 * Runs fn in a savepoint of trx. On SQLite the savepoint is set on the
 * transaction's connection directly and fn gets trx itself: a knex nested
 * transaction builds a whole new knex instance for each job, which cost the
 * queue's thread more than most jobs' SQL.
 */
async function inSavepoint<T>(trx: Knex.Transaction, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const direct = sqliteConnectionOf(trx);
  if (!direct) return trx.transaction((sp) => fn(sp));
  if (!direct.inTransaction) throw new TransactionLost(new Error('no transaction is open'));
  direct.exec('SAVEPOINT group_job');
  let value: T;
  try {
    value = await fn(trx);
  } catch (e) {
    if (!direct.inTransaction) throw new TransactionLost(e);
    direct.exec('ROLLBACK TO group_job');
    direct.exec('RELEASE group_job');
    throw e;
  }
  direct.exec('RELEASE group_job');
  return value;
}
