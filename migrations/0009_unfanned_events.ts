import type { Knex } from 'knex';

// The dispatcher looks for events not yet fanned out; most events are stored
// already fanned out (nobody subscribes to them), so a full index on
// (fanned_out, id) paid a write for every event to find the few. A partial
// index holds only the waiting ones. The same SQL on both databases; the
// dispatcher's query repeats the predicate literally so that SQLite uses it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['fanned_out', 'id']);
  });
  await knex.raw('create index events_waiting_fan_out on events (id) where fanned_out = false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index events_waiting_fan_out');
  await knex.schema.alterTable('events', (t) => {
    t.index(['fanned_out', 'id']);
  });
}
