import type { Knex } from 'knex';

// Transport security of outbound mail (docs/transport-security.md). MTA-STS policies (RFC 8461)
// are cached per recipient domain for their max_age, here rather than in memory so that a restart
// keeps them (§3.3: a cached policy protects against a later downgrade of the TXT record or the
// HTTPS fetch) and every node applies the same one. TLS-RPT (RFC 8460) counts each day's TLS
// sessions per policy domain and result type, for the aggregate report of that day.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mta_sts_policies', (t) => {
    t.string('domain', 255).primary();
    /** the `_mta-sts` TXT record's id the policy was fetched under (§3.1) */
    t.string('txt_id', 32).notNullable();
    /** the policy file as fetched (at most 64 KiB); parsed again when read */
    t.text('policy_text').notNullable();
    t.bigInteger('fetched_at').notNullable();
    /** fetched_at + max_age */
    t.bigInteger('expires_at').notNullable();
  });
  await knex.schema.createTable('tls_rpt_counts', (t) => {
    t.string('policy_domain', 255).notNullable();
    /** days since the epoch (UTC): a report covers one UTC day (RFC 8460 §4.1) */
    t.integer('day').notNullable();
    /** sts | tlsa */
    t.string('policy_type', 16).notNullable();
    /** `success`, or one of RFC 8460 §4.3's result types */
    t.string('result_type', 32).notNullable();
    t.string('mx_host', 255).notNullable();
    t.string('sending_ip', 45).notNullable();
    t.string('receiving_ip', 45).notNullable();
    /** the policy as RFC 8460 §4.5's policy-string (JSON array), the last one seen */
    t.text('policy_string').notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['policy_domain', 'day', 'policy_type', 'result_type', 'mx_host', 'sending_ip', 'receiving_ip']);
    t.index(['day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tls_rpt_counts');
  await knex.schema.dropTable('mta_sts_policies');
}
