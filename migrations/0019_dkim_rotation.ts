import type { Knex } from 'knex';

// DKIM keys that change without DNS edits (docs/domains.md "Key rotation"). Each of a domain's
// three selectors holds at most one key, in one state: `active` (signs; the domain's
// active_selector), `standby` (published, never signed: the keys made with the domain),
// `pending` (a rotation's new key, published at published_at, signing once resolvers have had
// it longer than its TTL) or `retiring` (the key signing stopped using, published until
// retire_at so that mail in flight still verifies; then its row, and so its record, goes).
// domains.dkim_activated_at: when signing moved to the active key (the next rotation counts from it).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domain_keys', (t) => {
    t.string('state', 16).notNullable().defaultTo('standby');
    t.bigInteger('published_at').nullable();
    t.bigInteger('retire_at').nullable();
  });
  await knex('domain_keys').update({ published_at: knex.ref('created_at') });
  await knex('domain_keys')
    .whereIn(['domain_id', 'selector'], knex('domains').select('id', 'active_selector'))
    .update({ state: 'active' });
  await knex.schema.alterTable('domains', (t) => {
    t.bigInteger('dkim_activated_at').nullable();
  });
  await knex('domains').update({ dkim_activated_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.dropColumn('dkim_activated_at');
  });
  await knex.schema.alterTable('domain_keys', (t) => {
    t.dropColumn('retire_at');
    t.dropColumn('published_at');
    t.dropColumn('state');
  });
}
