import type { Knex } from 'knex';

// CONTRACT §4: only a SHA-256 hash of a key is stored. The display prefix
// used to keep four characters of the secret; it keeps the mode only.
export async function up(knex: Knex): Promise<void> {
  await knex('api_keys').update({ prefix: knex.raw('substr(prefix, 1, 8)') });
}

export async function down(): Promise<void> {
  // the characters removed cannot come back, and nothing needs them
}
