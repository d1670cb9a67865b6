import type { Knex } from 'knex';

// TLS-RPT (RFC 8460 §5): which day's report of which policy domain went to which of its rua
// addresses (docs/transport-security.md). The row is written before the report leaves, under the
// unique key, so that a second node or a rerun of the tls_report job never sends it again; only a
// failed delivery is tried once more.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tls_rpt_sent', (t) => {
    t.string('policy_domain', 255).notNullable();
    /** days since the epoch (UTC): the report's day (RFC 8460 §4.1) */
    t.integer('day').notNullable();
    /** the rua URI as the `_smtp._tls` record gave it: `mailto:…` or `https://…` */
    t.string('rua', 1000).notNullable();
    /** sending (claimed, under way; one that never finished stays so), sent or failed */
    t.string('outcome', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(1);
    /** the last attempt */
    t.bigInteger('sent_at').notNullable();
    /** the email's id (mailto), the HTTP status, or why it failed */
    t.text('detail').nullable();
    /** who claimed the last attempt: the claim is read back to learn whether it was this run's */
    t.string('claim', 32).notNullable();
    t.primary(['policy_domain', 'day', 'rua']);
    t.index(['day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tls_rpt_sent');
}
