import type { Knex } from 'knex';

// The webhook dispatcher claims each endpoint's due deliveries on their own (issue 41), oldest
// first with ties in creation order (next_attempt_at, id). Indexes in exactly that order let a
// claim of 16 read 16 rows: without them PostgreSQL read and sorted every pending delivery and
// its event at each claim, over a thousand rows per event delivered with a backlog of thousands.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['endpoint_id', 'state', 'next_attempt_at', 'id'], 'webhook_deliveries_endpoint_due');
    t.index(['state', 'next_attempt_at', 'id'], 'webhook_deliveries_due');
    t.dropIndex(['state', 'next_attempt_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['state', 'next_attempt_at']);
    t.dropIndex([], 'webhook_deliveries_due');
    t.dropIndex([], 'webhook_deliveries_endpoint_due');
  });
}
