import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import type { Knex } from 'knex';

// knex's own factory of a knex object over a client (the one knex.transaction uses for each
// transaction); knex declares no "exports", so its files are public by path.
const makeKnex = createRequire(import.meta.url)('knex/lib/knex-builder/make-knex.js') as (client: unknown) => Knex;

type Run = <T>(fn: (trx: Knex.Transaction) => Promise<T>) => Promise<T>;

/**
 * Transactions on a SQLite writer with one transaction object for them all.
 * knex.transaction builds a whole knex object for every transaction (every
 * query method defined anew on it): ~150 µs of CPU, most of it the garbage
 * collector's, where BEGIN and COMMIT on the connection take 4 µs; the queue
 * commits a transaction for every few messages it delivers. Here BEGIN and
 * COMMIT go to the connection directly, and fn gets one transactor built
 * once, whose queries run on the connection this transaction holds: the
 * pool's only one, so no other query of the process runs until it ends.
 *
 * A query of an ended transaction (a builder kept and run later) fails, as
 * with knex's own transactions, unless another transaction has begun since:
 * then it runs in that one. Nothing here keeps a builder past its transaction.
 * A nested transaction (trx.transaction(fn)) is a savepoint.
 */
export function sqliteTransactions(knex: Knex): Run {
  let held: Database.Database | null = null;
  let transactor: Knex.Transaction | null = null;
  const connection = () => {
    if (!held) throw new Error('the transaction has ended');
    return held;
  };
  return async <T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> => {
    const client = knex.client as {
      acquireConnection(): Promise<Database.Database>;
      releaseConnection(c: unknown): Promise<unknown>;
    };
    const conn = await client.acquireConnection();
    try {
      conn.exec('BEGIN');
      held = conn;
      transactor ??= pinnedTransactor(knex, connection);
      let value: T;
      try {
        value = await fn(transactor);
      } finally {
        held = null;
      }
      conn.exec('COMMIT');
      return value;
    } catch (e) {
      // SQLite has rolled back itself after a failed write for space or I/O; else roll back here
      if (conn.inTransaction) conn.exec('ROLLBACK');
      throw e;
    } finally {
      await client.releaseConnection(conn);
    }
  };
}

/** A knex object whose queries run on `connection()`, as a transaction's do (knex's makeTxClient, made once). */
function pinnedTransactor(knex: Knex, connection: () => Database.Database): Knex.Transaction {
  const client = knex.client as Record<string, unknown> & { constructor: { prototype: object } };
  const trxClient = Object.create(client.constructor.prototype) as Record<string, unknown>;
  for (const key of ['version', 'config', 'driver', 'connectionSettings', 'valueForUndefined', 'logger'])
    trxClient[key] = client[key];
  trxClient.transacting = true;
  trxClient.acquireConnection = () => Promise.resolve().then(connection);
  trxClient.releaseConnection = () => Promise.resolve();
  const trx = makeKnex(trxClient) as Knex.Transaction & Record<string, unknown>;
  trx.isTransaction = true;
  trx.userParams = {};
  const refuse = () => {
    throw new Error('a SQLite store transaction ends when its function returns');
  };
  trx.commit = refuse;
  trx.rollback = refuse;
  // a nested transaction is a savepoint, as knex's would be
  let depth = 0;
  const nested = async <T>(container?: (t: Knex.Transaction) => Promise<T>): Promise<T> => {
    if (typeof container !== 'function') return refuse();
    const conn = connection();
    const name = `nested_${++depth}`;
    conn.exec(`SAVEPOINT ${name}`);
    try {
      const value = await container(trx);
      conn.exec(`RELEASE ${name}`);
      return value;
    } catch (e) {
      if (conn.inTransaction) conn.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw e;
    } finally {
      depth--;
    }
  };
  trx.savepoint = nested;
  (trx as unknown as { context: Record<string, unknown> }).context.transaction = nested;
  trx.isCompleted = () => false;
  return trx;
}
