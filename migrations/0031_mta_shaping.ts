import type { Knex } from 'knex';

// Traffic shaping toward mailbox providers (docs/delivery.md). The MTA keeps each (provider,
// source IP)'s state in memory and writes it here every few seconds, so that a restart does not
// hammer a provider that suspended it, other nodes honour the suspension, and `posthorn mta status`
// (another process) can read it. Minutes count outcomes for the status's last hour; routes map a
// recipient domain to the provider its MX hosts belong to, so that queued mail can be counted per
// provider. Warm-up counts each source IP's messages per provider and day.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mta_lanes', (t) => {
    t.string('provider', 255).notNullable();
    t.string('source_ip', 45).notNullable();
    /** in the provider table (else named after an MX host's domain): metrics label only these */
    t.boolean('known').notNullable().defaultTo(false);
    t.string('state', 16).notNullable();
    t.bigInteger('until_at').nullable();
    t.text('reason').nullable();
    t.integer('rate_per_minute').nullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['provider', 'source_ip']);
  });
  await knex.schema.createTable('mta_lane_minutes', (t) => {
    t.string('provider', 255).notNullable();
    t.string('source_ip', 45).notNullable();
    t.bigInteger('minute').notNullable();
    t.integer('delivered').notNullable().defaultTo(0);
    t.integer('deferred').notNullable().defaultTo(0);
    t.integer('bounced').notNullable().defaultTo(0);
    t.integer('throttled').notNullable().defaultTo(0);
    t.primary(['provider', 'source_ip', 'minute']);
    t.index(['minute']);
  });
  await knex.schema.createTable('mta_routes', (t) => {
    t.string('route', 255).primary();
    t.string('provider', 255).notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['provider']);
  });
  await knex.schema.createTable('mta_ip_days', (t) => {
    t.string('source_ip', 45).notNullable();
    t.string('provider', 255).notNullable();
    t.integer('day').notNullable();
    t.integer('sent').notNullable().defaultTo(0);
    t.primary(['source_ip', 'provider', 'day']);
  });
  await knex.schema.createTable('mta_ips', (t) => {
    t.string('address', 45).primary();
    t.bigInteger('first_used_at').notNullable();
  });
  await knex.schema.alterTable('projects', (t) => {
    t.string('ip_pool', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE, not knex's dropColumn: on SQLite that rebuilds projects and cascades to every row naming one
  await knex.raw('alter table projects drop column ip_pool');
  for (const t of ['mta_ips', 'mta_ip_days', 'mta_routes', 'mta_lane_minutes', 'mta_lanes'])
    await knex.schema.dropTable(t);
}
