import type { Knex } from 'knex';

// A domain may ask for one-click unsubscribe (RFC 8058) on every send from it, as a send asks
// with the header `List-Unsubscribe: <auto>` (docs/unsubscribe.md).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.boolean('list_unsubscribe').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.dropColumn('list_unsubscribe');
  });
}
