import type { Knex } from 'knex';

// A template version published through the Resend-compatible surface (/resend, docs/resend.md)
// keeps what the client wrote in Resend's syntax (`{{{NAME|fallback}}}`, variables declared with
// their fallback values) beside our translation of it, so that its get answers what was sent.
// JSON, opaque to the templates module; null for every version published through /v1.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('template_versions', (t) => {
    t.text('foreign_source').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // ALTER TABLE … DROP COLUMN, not knex's dropColumn: on SQLite that rebuilds the table inside the
  // migration's transaction, where foreign_keys cannot be turned off (0036_webhook_formats.ts).
  await knex.raw('alter table template_versions drop column foreign_source');
}
