import type { Knex } from 'knex';

// One word, one thing: the MTA's queue row was a "delivery", the word the
// webhooks use for an attempt series (webhook_deliveries). The queue is now
// outbound_queue and a recipient names its row by queue_row_id. Its indexes
// get the names knex gives the new table's (SQLite cannot rename an index).
export async function up(knex: Knex): Promise<void> {
  await renameQueue(knex, 'deliveries', 'outbound_queue');
  await knex.schema.alterTable('email_recipients', (t) => {
    t.renameColumn('delivery_id', 'queue_row_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_recipients', (t) => {
    t.renameColumn('queue_row_id', 'delivery_id');
  });
  await renameQueue(knex, 'outbound_queue', 'deliveries');
}

async function renameQueue(knex: Knex, from: string, to: string): Promise<void> {
  await knex.schema.alterTable(from, (t) => {
    t.dropIndex(['state', 'next_attempt_at']);
    t.dropIndex(['email_id']);
  });
  await knex.schema.renameTable(from, to);
  await knex.schema.alterTable(to, (t) => {
    t.index(['state', 'next_attempt_at']);
    t.index(['email_id']);
  });
}
