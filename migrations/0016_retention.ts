import type { Knex } from 'knex';

// The retention job (modules/operations/retention) walks what it may delete oldest
// first: emails by their primary key (ids follow the order they were made
// in; no index of its own, which every accept would pay for), events of no
// email (email.received, a partial index that holds only them) and received
// mail by when they were made. A deleted event takes its webhook deliveries
// with it: without an index on webhook_deliveries(event_id) each one would
// scan that table (to find the deliveries still pending, and for the
// foreign key's cascade).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index events_without_email on events (created_at, id) where email_id is null');
  await knex.schema.alterTable('inbound_emails', (t) => {
    t.index(['created_at', 'id'], 'inbound_emails_by_time');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['event_id'], 'webhook_deliveries_by_event');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(['event_id'], 'webhook_deliveries_by_event');
  });
  await knex.schema.alterTable('inbound_emails', (t) => {
    t.dropIndex(['created_at', 'id'], 'inbound_emails_by_time');
  });
  await knex.raw('drop index events_without_email');
}
