import type { Knex } from 'knex';

// Segments (issue 27; docs/contacts.md): a saved filter over a project's contacts, or one audience's,
// in the condition language of templates. `filter` as written, `compiled` its tree (JSON), `roots`
// the names it reads (JSON array: a property a segment reads cannot be deleted).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('segments', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('audience_id', 40).nullable().references('id').inTable('audiences');
    t.text('filter').notNullable();
    t.text('compiled').notNullable();
    t.text('roots').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('segments');
}
