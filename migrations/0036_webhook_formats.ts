import type { Knex } from 'knex';

// Each webhook endpoint's formats (docs/webhooks.md, "Formats"): how its deliveries are signed
// (`service` | `standard`) and shaped (`service` | `resend`). Existing endpoints get the defaults,
// which are what they received before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.string('signature_format', 16).notNullable().defaultTo('service');
    t.string('payload_format', 16).notNullable().defaultTo('service');
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, where foreign_keys cannot be turned off, and dropping the old table
  // would cascade to the endpoints' deliveries.
  await knex.raw('alter table webhook_endpoints drop column payload_format');
  await knex.raw('alter table webhook_endpoints drop column signature_format');
}
