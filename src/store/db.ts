import type { Knex } from 'knex';

// What every repo works with: a knex handle or transaction on either
// database, and the few SQL helpers whose SQL differs between the two.

export type Db = Knex | Knex.Transaction;
export type DatabaseClient = 'sqlite' | 'pg';

export interface SqlRunner {
  /** for compiling queries in this database's dialect */
  readonly knex: Knex;
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

/** The dialect behind a knex handle or transaction. */
export function dialectOf(db: Db): DatabaseClient {
  return (db.client as { config?: { client?: string } }).config?.client === 'pg' ? 'pg' : 'sqlite';
}

/**
 * Lock rows for the rest of the transaction before reading and rewriting
 * them (read-modify-write). PostgreSQL needs it when several processes share
 * the store; SQLite has one writer, whose transaction already excludes every
 * other. Rows are locked in id order so that two transactions cannot deadlock. `by`: the column
 * `ids` are values of (the queue rows of some emails: 'email_id').
 */
export async function lockRows(trx: Knex.Transaction, table: string, ids: string[], by = 'id'): Promise<void> {
  if (!ids.length || dialectOf(trx) !== 'pg') return;
  await trx(table)
    .select('id')
    .whereIn(by, [...ids].sort())
    .orderBy('id')
    // NO KEY UPDATE: excludes every other locker here as FOR UPDATE does, but not the KEY SHARE lock an
    // insert of a row referring to this one takes (an event, a request log naming the project): with
    // FOR UPDATE those inserts waited for the lock and deadlocked against its holder. Keys never change.
    .forNoKeyUpdate();
}

/** A unique index refused the row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY). */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * A LIKE pattern's text taken literally: `%`, `_` and the escape character
 * itself escaped with a backslash, for `like ? escape '\'` (SQLite and
 * PostgreSQL alike).
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One page of a project's rows of `table`, newest first by id, after the id `before`: `limit + 1` rows, so that the caller knows whether more follow. */
export async function projectRowsPage<Row>(
  db: Db,
  table: string,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Row[]> {
  const q = db(table).select('*').where({ project_id: projectId });
  if (before) q.andWhere('id', '<', before);
  return (await q.orderBy('id', 'desc').limit(limit + 1)) as Row[];
}
