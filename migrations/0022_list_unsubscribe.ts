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
  // Whom each unsubscribe token names, kept after retention deletes the email (a newsletter is read,
  // and its link followed, weeks later): written with the email, deleted after 400 days.
  await knex.schema.createTable('unsubscribe_links', (t) => {
    t.string('recipient_id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('email_id', 40).notNullable();
    t.string('address', 320).notNullable();
    t.string('from_domain', 253).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('unsubscribe_links');
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropColumn('unsubscribed_at');
  });
  await knex.schema.alterTable('domains', (t) => {
    t.dropColumn('list_unsubscribe');
  });
}
