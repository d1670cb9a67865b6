import type { Db } from './db.js';

// The meta table: facts about the installation kept in its database (the
// first start's marker, the tracking key), so that every process of a
// PostgreSQL cluster sees the same.

/** Writes the value unless the key has one; true when this call wrote it (of several racing, exactly one). */
export async function insertMetaOnce(db: Db, key: string, value: string): Promise<boolean> {
  const inserted = (await db('meta').insert({ key, value }).onConflict('key').ignore().returning('key')) as unknown[];
  return inserted.length > 0;
}

export async function readMeta(db: Db, key: string): Promise<string | null> {
  const row = (await db('meta').select('value').where({ key }).first()) as { value: string } | undefined;
  return row?.value ?? null;
}

/** Writes the value, replacing the key's. */
export async function writeMeta(db: Db, key: string, value: string): Promise<void> {
  await db('meta').insert({ key, value }).onConflict('key').merge();
}
