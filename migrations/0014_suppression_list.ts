import type { Knex } from 'knex';

// GET /v1/suppressions lists a project's suppressions newest first, a page at
// a time: without this index each page sorts the project's whole list.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.index(['project_id', 'created_at'], 'suppressions_by_time');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropIndex(['project_id', 'created_at'], 'suppressions_by_time');
  });
}
