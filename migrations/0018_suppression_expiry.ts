import type { Knex } from 'knex';

// A suppression may end: `expires_at` (ms; null = for ever). An expired one
// blocks nothing from that moment, and a job deletes it later.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.bigInteger('expires_at').nullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropIndex(['expires_at']);
    t.dropColumn('expires_at');
  });
}
