import type { Knex } from 'knex';

// GET /v1/logs: a project's recent API requests. What was asked and how it
// went, never a body, a query string or a key: the key's id is enough to
// find which client it was.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('request_logs', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('key_id', 40).notNullable();
    t.string('request_id', 40).notNullable();
    t.string('method', 8).notNullable();
    t.string('path', 500).notNullable();
    t.integer('status').notNullable();
    t.integer('duration_ms').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'id']);
    // the retention job deletes by age across projects (not by id: ids never go back when the clock does)
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('request_logs');
}
