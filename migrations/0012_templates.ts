import type { Knex } from 'knex';

// Templates (interface §2.4, §4.3). The id a client chooses is unique per
// project, so a row has an internal key (`uid`, tpl_…) that versions hang
// from: a template deleted and created again under the same id starts over
// at version 1, and nothing cached for the old one can be mistaken for it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('templates', (t) => {
    t.string('uid', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('id', 64).notNullable();
    t.string('name', 200).notNullable();
    t.string('category', 40).nullable();
    // JSON [{version, percent}] or null
    t.text('split').nullable();
    t.integer('latest_version').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['project_id', 'id']);
  });

  // Versions are immutable: written once, never updated.
  await knex.schema.createTable('template_versions', (t) => {
    t.string('template_uid', 40).notNullable().references('uid').inTable('templates').onDelete('CASCADE');
    t.integer('version').notNullable();
    // what the client sent (JSON for the structured fields)
    t.text('subject').notNullable();
    t.text('html').nullable();
    t.text('text').nullable();
    t.text('design').nullable();
    t.text('translations').notNullable();
    t.text('variables').notNullable();
    // what a send renders: the parsed trees of every part and translation (JSON)
    t.text('compiled').notNullable();
    t.integer('restored_from').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['template_uid', 'version']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('template_versions');
  await knex.schema.dropTable('templates');
}
