import type { Knex } from 'knex';

// What each blocklist said of each outbound IP and verified domain at its last check
// (docs/blocklists.md). `state` is the last answer (listed, clear or error); `known_state` the
// last listed-or-clear answer, which a list's error never overwrites: events compare with it.
// `since`: when `state` began.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('blocklist_checks', (t) => {
    t.string('target', 253).notNullable();
    t.string('zone', 253).notNullable();
    t.string('kind', 8).notNullable();
    t.string('state', 8).notNullable();
    t.string('known_state', 8).nullable();
    t.text('codes').notNullable();
    t.text('reason').nullable();
    t.bigInteger('since').notNullable();
    t.bigInteger('checked_at').notNullable();
    t.primary(['target', 'zone']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('blocklist_checks');
}
