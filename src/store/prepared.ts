import type { Knex } from 'knex';
import { sqliteConnectionOf, sqliteValue } from './sqlite.js';
import { dialectOf, type Db, type SqlRunner } from './db.js';

/**
 * A query built once with knex and then run as raw SQL: knex's builder
 * costs tens of microseconds per call, more than SQLite takes to answer, on
 * paths that run for every request. `build` is called with placeholder
 * values; the real ones are passed in the same order at every call.
 */
export function prepared<Row>(
  build: (db: Db, ...params: unknown[]) => Knex.QueryBuilder,
  arity: number,
): (db: Db | SqlRunner, ...params: unknown[]) => Promise<Row[]> {
  const sqlByDialect = new Map<string, string>();
  return async (target, ...params) => {
    const runner = 'all' in target ? target : null;
    const db = runner ? runner.knex : (target as Db);
    const dialect = (db.client as { config?: { client?: string } }).config?.client ?? 'unknown';
    let sql = sqlByDialect.get(dialect);
    if (!sql) {
      const placeholders = Array.from({ length: arity }, (_, i) => `__p${i}__`);
      const compiled = build(db, ...placeholders).toSQL();
      // the placeholders must come back as the bindings, in order: then the SQL is reusable
      if (compiled.bindings.length !== arity || compiled.bindings.some((b, i) => b !== placeholders[i]))
        throw new Error('prepared(): the query does not bind its parameters in order');
      sql = compiled.sql;
      sqlByDialect.set(dialect, sql);
    }
    if (runner) return runner.all<Row>(sql, params);
    const direct = sqliteConnectionOf(db);
    if (direct) {
      const st = direct.prepare(sql);
      const values = params.map(sqliteValue);
      if (st.reader) return st.all(...values) as Row[];
      st.run(...values);
      return [];
    }
    const res = (await db.raw(sql, params as Knex.RawBinding[])) as Row[] | { rows: Row[] };
    return Array.isArray(res) ? res : res.rows;
  };
}

/**
 * A list of values as one parameter of a prepared query: `whereIn(column, oneOf(db, p))`, with
 * the list passed as `listParam(values)`. One statement then serves lists of every length,
 * prepared once, where `whereIn(column, values)` is a new shape for each length, compiled by knex
 * at every call (~45 µs of CPU each, against ~15 µs for the statement). The values are text.
 */
export function oneOf(db: Db, param: unknown): Knex.QueryBuilder {
  const list =
    dialectOf(db) === 'pg'
      ? db.raw('select json_array_elements_text(cast(? as json))', [param as string])
      : db.raw('select value from json_each(?)', [param as string]);
  // knex takes a raw subquery where its types name only a builder: it wraps it in parentheses
  return list as unknown as Knex.QueryBuilder;
}

/** A list passed to a oneOf() parameter. */
export const listParam = (values: readonly string[]): string => JSON.stringify(values);
