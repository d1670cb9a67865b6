import type { Knex } from 'knex';

// Why a queued row waits, when the MTA holds it back for a reason of its own rather than the
// receiver's (docs/delivery.md): `throttle` (its provider suspended the sender), `warmup` (the
// source addresses sent today's warm-up cap), `dns` (the route's DNS lookups fail) or `tls` (the
// domain's MTA-STS or DANE policy leaves no MX host to use). The dashboard's emails page counts
// them per project; the next attempt's outcome replaces them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbound_queue', (t) => {
    t.string('wait_kind', 16).nullable();
    /** the deferral's reply, as the recipient's email.delivery_delayed gave it */
    t.text('wait_reason').nullable();
    // most rows wait for nothing of the MTA's own (null): the dashboard reads the few that do
    t.index(['wait_kind', 'project_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbound_queue', (t) => t.dropIndex(['wait_kind', 'project_id']));
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table
  await knex.raw('alter table outbound_queue drop column wait_kind');
  await knex.raw('alter table outbound_queue drop column wait_reason');
}
