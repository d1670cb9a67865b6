import type { Knex } from 'knex';

// Why a bounce suppressed an address: the reason, status and server's words of the bounce, kept on
// the suppression (GET /v1/suppressions shows them; `posthorn suppressions review` reads the
// diagnostic again with the classifier of the day). A project may suppress an address after
// repeated soft bounces of a reason that may last (a full mailbox, a suspended account): N of them
// within M days, counted in soft_bounces (null: off, the default).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.string('bounce_reason', 32).nullable();
    t.string('bounce_status', 16).nullable();
    t.text('diagnostic').nullable();
  });
  await knex.schema.alterTable('projects', (t) => {
    t.integer('soft_bounce_count').nullable();
    t.integer('soft_bounce_days').nullable();
  });
  await knex.schema.createTable('soft_bounces', (t) => {
    t.string('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('address').notNullable();
    t.string('reason', 32).notNullable();
    t.string('email_id').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'address', 'created_at']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('soft_bounces');
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, where foreign_keys cannot be turned off, and dropping the old projects
  // table would cascade to every row that names a project.
  for (const column of ['soft_bounce_days', 'soft_bounce_count'])
    await knex.raw(`alter table projects drop column ${column}`);
  for (const column of ['diagnostic', 'bounce_status', 'bounce_reason'])
    await knex.raw(`alter table suppressions drop column ${column}`);
}
