import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_attachments', (t) => {
    t.string('email_id', 40).notNullable().references('id').inTable('emails').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('filename', 255).notNullable();
    t.string('content_type', 100).notNullable();
    t.string('content_id', 100).nullable();
    t.binary('content').notNullable();
    t.primary(['email_id', 'position']);
  });

  // The queue (the database is the queue): one row per email and recipient
  // domain (direct mode) or per email (relay, simulation). A worker claims a
  // due row by moving it to `submitting` with a lease; `data_started` is
  // written before the message body goes out, so that after a crash a row
  // left `submitting` is known to be safe to retry only when it is false.
  await knex.schema.createTable('deliveries', (t) => {
    t.string('id', 40).primary();
    t.string('email_id', 40).notNullable().references('id').inTable('emails').onDelete('CASCADE');
    t.string('project_id', 40).notNullable();
    // recipient domain in direct mode, '' when the whole email goes one way (relay, simulation)
    t.string('route', 253).notNullable();
    t.string('state', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at').notNullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.boolean('data_started').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['state', 'next_attempt_at']);
    t.index(['email_id']);
  });

  await knex.schema.alterTable('email_recipients', (t) => {
    t.string('delivery_id', 40).nullable();
    t.index(['delivery_id']);
  });

  await knex.schema.createTable('suppressions', (t) => {
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('address', 320).notNullable();
    t.string('reason', 16).notNullable();
    t.string('email_id', 40).nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['project_id', 'address']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('key', 255).notNullable();
    t.string('request_hash', 64).notNullable();
    // running: the first request is still being answered; done: response_* hold its answer
    t.string('state', 8).notNullable();
    t.integer('response_status').nullable();
    t.text('response_body').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['project_id', 'key']);
    t.index(['created_at']);
  });

  // Live recipients counted per project and UTC day / month for the limits.
  await knex.schema.createTable('usage_counters', (t) => {
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    // 'd:2026-11-22' or 'm:2026-11'
    t.string('period', 16).notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['project_id', 'period']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('usage_counters');
  await knex.schema.dropTable('idempotency_keys');
  await knex.schema.dropTable('suppressions');
  await knex.schema.alterTable('email_recipients', (t) => {
    t.dropIndex(['delivery_id']);
    t.dropColumn('delivery_id');
  });
  await knex.schema.dropTable('deliveries');
  await knex.schema.dropTable('email_attachments');
}
