import type { Db } from './db.js';
import { cachedSql, inChunks } from './insert-rows.js';

/** The SQL type a column's values are cast to: PostgreSQL reads an untyped binding in VALUES as text. */
export type ColumnType = 'text' | 'integer' | 'bigint';

export interface UpdateSpec {
  /** the column that finds each row (its value in every row); answered for the rows updated */
  key: string;
  /** every column of the rows, key included, with its type */
  types: Record<string, ColumnType>;
  /** columns set to the same value in every row updated (null: cleared) */
  constant?: Record<string, string | number | null>;
  /** only rows whose columns hold these values are updated (a lease's owner, a state) */
  where?: Record<string, string | number>;
}

/**
 * Many rows updated to values of their own in one statement per chunk of 64
 * (`WITH v AS (VALUES …) UPDATE … FROM v`, which SQLite and PostgreSQL both
 * read) instead of one statement each: on PostgreSQL each statement is a
 * round trip. Answers the keys of the rows that matched `where` and were
 * updated; every row must have the columns of `types`, in any order.
 */
export async function updateRows(
  db: Db,
  table: string,
  rows: Array<Record<string, unknown>>,
  spec: UpdateSpec,
): Promise<string[]> {
  if (!rows.length) return [];
  const columns = Object.keys(spec.types);
  const constant = Object.entries(spec.constant ?? {});
  const where = Object.entries(spec.where ?? {});
  const sql = (n: number) =>
    cachedSql(`update|${table}|${JSON.stringify(spec)}|${n}`, () => {
      const row = `(${columns.map((c) => `cast(? as ${spec.types[c]})`).join(', ')})`;
      const set = [
        ...columns.filter((c) => c !== spec.key).map((c) => `"${c}" = v."${c}"`),
        ...constant.map(([c]) => `"${c}" = ?`),
      ];
      const conditions = [`"${table}"."${spec.key}" = v."${spec.key}"`, ...where.map(([c]) => `"${table}"."${c}" = ?`)];
      return (
        `with v (${columns.map((c) => `"${c}"`).join(', ')}) as (values ${Array.from({ length: n }, () => row).join(', ')}) ` +
        `update "${table}" set ${set.join(', ')} from v where ${conditions.join(' and ')} returning "${table}"."${spec.key}"`
      );
    });
  // the constants' and conditions' bindings follow the rows', in the order the statement names them
  const extra = [...constant.map(([, v]) => v), ...where.map(([, v]) => v)];
  const updated = await inChunks(db, rows, columns, sql, true, extra);
  return updated.map((r) => String(r[spec.key]));
}
