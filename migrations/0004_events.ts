import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // The event outbox (LIFECYCLE): every state change writes its events here in
  // the same transaction; the webhook dispatcher fans them out afterwards.
  await knex.schema.createTable('events', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('type', 40).notNullable();
    t.string('email_id', 40).nullable();
    t.string('recipient', 320).nullable();
    t.boolean('simulated').notNullable();
    // the "data" object of the payload (interface §6), as JSON
    t.text('data').notNullable();
    // false until the dispatcher has created this event's deliveries
    t.boolean('fanned_out').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.index(['fanned_out', 'id']);
    t.index(['email_id']);
    t.index(['project_id', 'type', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
}
