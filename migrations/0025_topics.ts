import type { Knex } from 'knex';

// Topics (issue 27; docs/contacts.md): kinds of broadcast mail a contact subscribes to or not.
// A contact's choice is a row of contact_topics; without one, the topic's default decides.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('topics', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('description', 1000).nullable();
    // opt_in: only contacts who subscribed get it; opt_out: every contact but those who unsubscribed
    t.string('default', 8).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'id']);
  });
  await knex.schema.createTable('contact_topics', (t) => {
    t.string('contact_id', 40).notNullable().references('id').inTable('contacts').onDelete('CASCADE');
    t.string('topic_id', 40).notNullable().references('id').inTable('topics').onDelete('CASCADE');
    t.boolean('subscribed').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['contact_id', 'topic_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_topics');
  await knex.schema.dropTable('topics');
}
