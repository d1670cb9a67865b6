import type { Knex } from 'knex';

// No query looks recipients up by their queue row (they are read by email and
// matched in memory), and every recipient insert and update paid for the index.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.dropIndex(['delivery_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.index(['delivery_id']);
  });
}
