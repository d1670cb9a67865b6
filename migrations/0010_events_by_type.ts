import type { Knex } from 'knex';

// No query reads events by (project, type, time): insights join them to their
// emails through events (email_id), the dispatcher uses events_waiting_fan_out
// and replay looks them up by id. Every event insert paid for the index, and
// it was the costliest of an accepted email's b-trees: each commit rewrote a
// leaf of it per event type, about a tenth of the WAL written per email.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['project_id', 'type', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.index(['project_id', 'type', 'created_at']);
  });
}
