import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Small key/value facts about this installation (e.g. that the first start happened).
  await knex.schema.createTable('meta', (t) => {
    t.string('key', 100).primary();
    t.text('value').notNullable();
  });

  await knex.schema.createTable('projects', (t) => {
    t.string('id', 40).primary();
    t.string('name', 200).notNullable().unique();
    t.boolean('approved').notNullable().defaultTo(false);
    t.boolean('suspended').notNullable().defaultTo(false);
    // 0 = unlimited (CONTRACT §3)
    t.integer('daily_limit').notNullable().defaultTo(0);
    t.integer('monthly_limit').notNullable().defaultTo(0);
    t.integer('domain_limit').notNullable().defaultTo(0);
    t.integer('verify_limit').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).nullable();
    t.string('mode', 8).notNullable();
    t.text('scopes').notNullable();
    // SHA-256 of the whole key, hex: the key itself is never stored.
    t.string('secret_hash', 64).notNullable().unique();
    // "ph_live_AbCd" so that an operator can tell keys apart in a list
    t.string('prefix', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.index(['project_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('projects');
  await knex.schema.dropTable('meta');
}
