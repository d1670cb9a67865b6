import type { Knex } from 'knex';

// The processes of one database (issue 41; docs/operations.md "Running several nodes"). Each
// serving process registers a row under a random id, the owner written into the leases it takes,
// and beats its heartbeat every few seconds. A node whose heartbeat is older than
// cluster.dead_after is dead: whoever notices first releases what it held.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('nodes', (t) => {
    t.string('id', 40).primary();
    t.string('host', 255).notNullable();
    t.integer('pid').notNullable();
    t.string('version', 40).notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('heartbeat_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('nodes');
}
