import type { Knex } from 'knex';
import { sqliteConnectionOf, sqliteValue } from './sqlite.js';
import { type Db } from './db.js';

const sqlCache = new Map<string, string>();
const CHUNKS = [64, 32, 16, 8, 4, 2, 1];
/** PostgreSQL's limit is 65,535 bindings a statement, SQLite's 32,766: a chunk keeps well below both. */
const MAX_BINDINGS = 30_000;

/**
 * Multi-row INSERT without knex's builder, whose cost grows with every
 * value. Rows go in chunks of 64, 32, …, 1, so a table only ever sees seven
 * statement shapes: SQLite keeps them prepared instead of parsing a new,
 * long statement for every batch size. Every row must have the same keys.
 */
export async function insertRows(db: Db, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]);
  await inChunks(db, rows, columns, (n) => insertStatement(table, columns, n), false);
}

/**
 * insertRows for rows that may already be there: a row whose `unique` columns
 * another transaction has committed (or is committing: PostgreSQL waits for
 * it) is skipped, not an error. Answers the `unique` values of the rows it
 * inserted, so the caller knows which ones lost.
 */
export async function insertRowsIgnoring(
  db: Db,
  table: string,
  rows: Array<Record<string, unknown>>,
  unique: string[],
): Promise<Array<Record<string, unknown>>> {
  if (!rows.length) return [];
  const columns = Object.keys(rows[0]);
  const keys = unique.map((c) => `"${c}"`).join(', ');
  return inChunks(
    db,
    rows,
    columns,
    (n) => `${insertStatement(table, columns, n)} on conflict (${keys}) do nothing returning ${keys}`,
    true,
  );
}

/**
 * Runs `sql(n)` over the rows in chunks of 64, 32, …, 1 (each row's `columns`
 * in order as its bindings, then `extra` after each chunk's), collecting the
 * rows a statement returns when `returning`. Shared by the bulk inserts and
 * updates of the store.
 */
export async function inChunks(
  db: Db,
  rows: Array<Record<string, unknown>>,
  columns: string[],
  sql: (n: number) => string,
  returning: boolean,
  extra: unknown[] = [],
): Promise<Array<Record<string, unknown>>> {
  const direct = sqliteConnectionOf(db);
  const out: Array<Record<string, unknown>> = [];
  let i = 0;
  while (i < rows.length) {
    const left = rows.length - i;
    const n = CHUNKS.find((c) => c <= left && c * columns.length <= MAX_BINDINGS) ?? 1;
    const bindings: unknown[] = [];
    for (const row of rows.slice(i, i + n))
      for (const c of columns) bindings.push(direct ? sqliteValue(row[c]) : (row[c] ?? null));
    for (const v of extra) bindings.push(direct ? sqliteValue(v) : v);
    if (direct) {
      const statement = direct.prepare(sql(n));
      if (returning) out.push(...(statement.all(...bindings) as Array<Record<string, unknown>>));
      else statement.run(...bindings);
    } else {
      // PostgreSQL answers { rows }; SQLite through knex (no connection of ours at hand) the rows themselves
      const result = await db.raw<{ rows: Array<Record<string, unknown>> } | Array<Record<string, unknown>>>(
        sql(n),
        bindings as Knex.RawBinding[],
      );
      if (returning) out.push(...(Array.isArray(result) ? result : result.rows));
    }
    i += n;
  }
  return out;
}

/** `key` names the statement in the cache: the same key must always build the same SQL. */
export function cachedSql(key: string, build: () => string): string {
  let sql = sqlCache.get(key);
  if (!sql) {
    sql = build();
    sqlCache.set(key, sql);
  }
  return sql;
}

function insertStatement(table: string, columns: string[], n: number): string {
  return cachedSql(`insert|${table}|${columns.join(',')}|${n}`, () => {
    const row = `(${columns.map(() => '?').join(', ')})`;
    return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: n }, () => row).join(', ')}`;
  });
}
