import type { Knex } from 'knex';

// A suppression may end: `expires_at` (ms; null = for ever). An expired one
// blocks nothing from that moment, and a job deletes it later. A project may
// have the suppressions its live mail adds for hard bounces end after some
// days (0 = never): a mailbox that did not exist may exist later.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.bigInteger('expires_at').nullable();
    t.index(['expires_at']);
  });
  await knex.schema.alterTable('projects', (t) => {
    t.integer('bounce_suppression_days').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('bounce_suppression_days');
  });
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropIndex(['expires_at']);
    t.dropColumn('expires_at');
  });
}
