import type { Knex } from 'knex';

// Broadcasts (issue 27; docs/broadcasts.md): one email per contact of an audience or segment,
// fanned out in batches whose emails and progress commit together, on a stream of their own.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('broadcasts', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    // draft | scheduled | sending | sent | cancelled (broadcast.ts)
    t.string('status', 12).notNullable();
    // the content and the recipients as the client wrote them (JSON), checked at every write
    t.text('content').notNullable();
    t.string('audience_id', 40).nullable();
    t.string('segment_id', 40).nullable();
    t.string('topic_id', 40).nullable();
    // the mode of the key that sent it: test broadcasts are simulated like test sends
    t.string('environment', 8).nullable();
    t.bigInteger('scheduled_at').nullable();
    // the fan-out: contacts created up to started_at, in id order, handed over up to cursor
    t.bigInteger('started_at').nullable();
    t.string('cursor', 40).nullable();
    t.integer('recipients').notNullable().defaultTo(0);
    t.integer('queued').notNullable().defaultTo(0);
    t.integer('suppressed').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    // emails taken back out of the outbound queue, unattempted, when it was cancelled
    t.integer('withdrawn').notNullable().defaultTo(0);
    t.string('error', 500).nullable();
    t.bigInteger('finished_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['project_id', 'id']);
    t.index(['status', 'scheduled_at']);
  });
  await knex.schema.alterTable('emails', (t) => {
    t.string('broadcast_id', 40).nullable();
    t.string('contact_id', 40).nullable();
    // one email per contact and broadcast, whatever a crash or a second process does (NULLs are distinct)
    t.unique(['broadcast_id', 'contact_id']);
  });
  await knex.schema.alterTable('outbound_queue', (t) => {
    // broadcast mail: claimed only when no transactional mail is due
    t.boolean('bulk').notNullable().defaultTo(false);
    t.index(['state', 'bulk', 'next_attempt_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, where foreign_keys cannot be turned off, and dropping the old table
  // would cascade to the emails' recipients and attachments.
  await knex.schema.alterTable('outbound_queue', (t) => t.dropIndex(['state', 'bulk', 'next_attempt_at']));
  await knex.raw('alter table outbound_queue drop column bulk');
  await knex.schema.alterTable('emails', (t) => t.dropUnique(['broadcast_id', 'contact_id']));
  await knex.raw('alter table emails drop column contact_id');
  await knex.raw('alter table emails drop column broadcast_id');
  await knex.schema.dropTable('broadcasts');
}
