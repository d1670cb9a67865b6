import type { Knex } from 'knex';

// Contacts, their declared properties, and audiences (issue 27; docs/contacts.md).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_properties', (t) => {
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('key', 50).notNullable();
    t.string('type', 8).notNullable();
    // JSON of the fallback value, of the property's type; null: none
    t.text('fallback').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['project_id', 'key']);
  });
  await knex.schema.createTable('contacts', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    // the bare address, lower-cased, as the suppression list and the accept compare it
    t.string('email', 320).notNullable();
    t.string('first_name', 200).nullable();
    t.string('last_name', 200).nullable();
    // JSON object of the declared properties' values
    t.text('properties').notNullable();
    t.boolean('unsubscribed').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['project_id', 'email']);
    t.index(['project_id', 'id']);
  });
  await knex.schema.createTable('audiences', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'id']);
  });
  await knex.schema.createTable('audience_contacts', (t) => {
    t.string('audience_id', 40).notNullable().references('id').inTable('audiences').onDelete('CASCADE');
    t.string('contact_id', 40).notNullable().references('id').inTable('contacts').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.primary(['audience_id', 'contact_id']);
    t.index(['contact_id']);
  });
  // Keys that held every scope (made without --scopes) hold the new groups' scopes too.
  const before = [
    'emails:send',
    'emails:read',
    'domains:manage',
    'templates:manage',
    'emails:verify',
    'webhooks:manage',
    'inbound:read',
    'suppressions:manage',
    'keys:manage',
    'usage:read',
    'logs:read',
  ];
  const keys = await knex('api_keys').select<Array<{ id: string; scopes: string }>>('id', 'scopes');
  for (const k of keys) {
    const scopes = JSON.parse(k.scopes) as string[];
    if (before.every((s) => scopes.includes(s)))
      await knex('api_keys')
        .where({ id: k.id })
        .update({ scopes: JSON.stringify([...new Set([...scopes, 'contacts:manage', 'broadcasts:manage'])]) });
  }
}

export async function down(knex: Knex): Promise<void> {
  // keys made since hold the new scopes too: an older version knows neither
  const keys = await knex('api_keys').select<Array<{ id: string; scopes: string }>>('id', 'scopes');
  for (const k of keys) {
    const scopes = (JSON.parse(k.scopes) as string[]).filter(
      (s) => s !== 'contacts:manage' && s !== 'broadcasts:manage',
    );
    if (scopes.length)
      await knex('api_keys')
        .where({ id: k.id })
        .update({ scopes: JSON.stringify(scopes) });
  }
  await knex.schema.dropTable('audience_contacts');
  await knex.schema.dropTable('audiences');
  await knex.schema.dropTable('contacts');
  await knex.schema.dropTable('contact_properties');
}
