import type { Knex } from 'knex';

// A key restricted to one sending domain (docs/projects-and-keys.md, "Keys restricted to a
// domain"): it may send only From that domain. No foreign key: a removed domain must not turn the
// restriction into none (ON DELETE SET NULL would), nor be kept alive by its keys (RESTRICT); a key
// whose domain is gone sends from nowhere.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.string('domain_id', 40).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, and dropping the old table would cascade to the dashboard's sessions.
  await knex.raw('alter table api_keys drop column domain_id');
}
