import type { Knex } from 'knex';

// A report the appliance mails itself, built as the report format asks rather than as a send of
// the API: `tlsrpt` for a TLS report (RFC 8460 §5.3: a multipart/report with report-type tlsrpt,
// delivered despite the recipient domain's MTA-STS or DANE policy, its sessions not counted).
// Set only by the appliance (tls-policy/tls-report-mail.ts): no send body can.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('emails', (t) => {
    t.string('report_type', 16).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table, and the
  // rebuild's DROP TABLE emails would cascade to the emails' recipients
  await knex.raw('alter table emails drop column report_type');
}
