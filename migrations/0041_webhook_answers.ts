import type { Knex } from 'knex';

// A webhook attempt keeps the first KiB of its answer's body (the dashboard's delivery log shows it, as
// Stripe's and Svix's do: "what did my receiver say?"). Null for an attempt that got no answer, and for
// every attempt recorded before this migration.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_attempts', (t) => {
    t.text('response_body').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, where foreign_keys cannot be turned off (0036_webhook_formats.ts).
  await knex.raw('alter table webhook_attempts drop column response_body');
}
