import type { Knex } from 'knex';

// DMARC aggregate reports (RFC 7489 §7.2) receivers mailed about a domain, or an operator
// imported (docs/dmarc.md): each report once per (domain, org_name, report_id), with its rows.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dmarc_reports', (t) => {
    t.string('id', 40).primary();
    t.string('domain_id', 40).notNullable().references('id').inTable('domains').onDelete('CASCADE');
    t.string('project_id', 40).notNullable();
    t.string('org_name', 255).notNullable();
    t.string('email', 255).nullable();
    t.string('report_id', 255).notNullable();
    t.bigInteger('begin_at').notNullable();
    t.bigInteger('end_at').notNullable();
    // policy_published as the reporter saw it: {p, sp, pct, adkim, aspf}
    t.text('policy').notNullable();
    t.integer('rows').notNullable();
    t.bigInteger('messages').notNullable();
    t.bigInteger('received_at').notNullable();
    t.unique(['domain_id', 'org_name', 'report_id']);
    t.index(['domain_id', 'end_at']);
  });
  await knex.schema.createTable('dmarc_rows', (t) => {
    t.string('report_id', 40).notNullable().references('id').inTable('dmarc_reports').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.string('source_ip', 45).notNullable();
    t.bigInteger('count').notNullable();
    t.string('disposition', 16).notNullable();
    // policy_evaluated: DKIM and SPF that passed and aligned with the header From
    t.string('dkim_eval', 8).notNullable();
    t.string('spf_eval', 8).notNullable();
    t.string('header_from', 255).notNullable();
    t.string('envelope_from', 255).nullable();
    // auth_results: [{domain, selector?, result}] and [{domain, scope?, result}]
    t.text('dkim').notNullable();
    t.text('spf').notNullable();
    t.primary(['report_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dmarc_rows');
  await knex.schema.dropTable('dmarc_reports');
}
