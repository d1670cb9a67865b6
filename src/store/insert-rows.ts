import type { Knex } from 'knex';
import { sqliteConnectionOf, sqliteValue } from './sqlite.js';
import { type Db } from './db.js';

const sqlCache = new Map<string, string>();
const CHUNKS = [64, 32, 16, 8, 4, 2, 1];

/**
 * Multi-row INSERT without knex's builder, whose cost grows with every
 * value. Rows go in chunks of 64, 32, …, 1, so a table only ever sees seven
 * statement shapes: SQLite keeps them prepared instead of parsing a new,
 * long statement for every batch size. Every row must have the same keys.
 */
export async function insertRows(db: Db, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]);
  const direct = sqliteConnectionOf(db);
  let i = 0;
  while (i < rows.length) {
    const left = rows.length - i;
    const n = CHUNKS.find((c) => c <= left && c * columns.length <= 30_000) ?? 1;
    const chunk = rows.slice(i, i + n);
    const bindings: unknown[] = [];
    for (const row of chunk) for (const c of columns) bindings.push(direct ? sqliteValue(row[c]) : (row[c] ?? null));
    if (direct) direct.prepare(statement(table, columns, n)).run(...bindings);
    else await db.raw(statement(table, columns, n), bindings as Knex.RawBinding[]);
    i += n;
  }
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
  const direct = sqliteConnectionOf(db);
  const suffix = ` on conflict (${unique.map((c) => `"${c}"`).join(', ')}) do nothing returning ${unique.map((c) => `"${c}"`).join(', ')}`;
  const inserted: Array<Record<string, unknown>> = [];
  for (let i = 0; i < rows.length; i += 64) {
    const chunk = rows.slice(i, i + 64);
    const bindings: unknown[] = [];
    for (const row of chunk) for (const c of columns) bindings.push(direct ? sqliteValue(row[c]) : (row[c] ?? null));
    const sql = statement(table, columns, chunk.length) + suffix;
    if (direct) inserted.push(...(direct.prepare(sql).all(...bindings) as Array<Record<string, unknown>>));
    else
      inserted.push(
        ...(await db.raw<{ rows: Array<Record<string, unknown>> }>(sql, bindings as Knex.RawBinding[])).rows,
      );
  }
  return inserted;
}

function statement(table: string, columns: string[], n: number): string {
  const key = `${table}|${columns.join(',')}|${n}`;
  let sql = sqlCache.get(key);
  if (!sql) {
    const row = `(${columns.map(() => '?').join(', ')})`;
    sql = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: n }, () => row).join(', ')}`;
    sqlCache.set(key, sql);
  }
  return sql;
}
