import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('url', 2000).notNullable();
    t.string('description', 500).nullable();
    t.text('events').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    // The HMAC key must be usable for signing, so it is kept (never shown again).
    t.string('secret', 100).notNullable();
    // After a rotation the old secret keeps signing until previous_secret_until (interface §6: 24 h).
    t.string('previous_secret', 100).nullable();
    t.bigInteger('previous_secret_until').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['project_id', 'id']);
  });

  // One row per (event, endpoint) attempt series (LIFECYCLE Webhook delivery);
  // deleting an endpoint deletes its pending deliveries with it.
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.string('id', 40).primary();
    t.string('endpoint_id', 40).notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
    t.string('event_id', 40).notNullable().references('id').inTable('events').onDelete('CASCADE');
    t.string('project_id', 40).notNullable();
    // pending | succeeded | failed
    t.string('state', 12).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at').notNullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.integer('last_status').nullable();
    t.text('last_error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['state', 'next_attempt_at']);
    t.index(['endpoint_id', 'id']);
  });

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.string('delivery_id', 40).notNullable().references('id').inTable('webhook_deliveries').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.integer('status_code').nullable();
    t.integer('duration_ms').notNullable();
    t.text('error').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['delivery_id', 'attempt']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_endpoints');
}
