import type { Knex } from 'knex';

// A domain may ask for one-click unsubscribe (RFC 8058) on every send from it, as a send asks
// with the header `List-Unsubscribe: <auto>` (docs/unsubscribe.md).
// suppressions.unsubscribed_at: when the address unsubscribed, kept whatever reason the row has now,
// so that a bounce's suppression that replaced the unsubscription (and ends) or an operator's does
// not end the unsubscription with it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.boolean('list_unsubscribe').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('suppressions', (t) => {
    t.bigInteger('unsubscribed_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropColumn('unsubscribed_at');
  });
  await knex.schema.alterTable('domains', (t) => {
    t.dropColumn('list_unsubscribe');
  });
}
