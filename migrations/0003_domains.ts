import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('domains', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    // A-label (punycode), lower-case; one project per domain on the whole appliance
    t.string('name', 253).notNullable().unique();
    t.string('region', 40).nullable();
    t.string('status', 20).notNullable();
    t.text('failure_reason').nullable();
    t.bigInteger('verified_at').nullable();
    t.bigInteger('last_checked_at').nullable();
    t.boolean('open_tracking').notNullable().defaultTo(false);
    t.boolean('click_tracking').notNullable().defaultTo(false);
    t.string('tls', 16).notNullable().defaultTo('opportunistic');
    t.string('return_path', 30).notNullable().defaultTo('send');
    // the label under dns.zone that the DKIM CNAMEs point into: <selector>.<token>.<zone>
    t.string('dkim_token', 32).notNullable().unique();
    t.string('active_selector', 32).notNullable();
    // last DNS check per record: {"<record key>": {"dns": "found"|…, "seen": [...]}}
    t.text('checks').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['project_id', 'id']);
    t.index(['status']);
  });

  await knex.schema.createTable('domain_keys', (t) => {
    t.string('domain_id', 40).notNullable().references('id').inTable('domains').onDelete('CASCADE');
    t.string('selector', 32).notNullable();
    // PKCS#8 PEM; never leaves the appliance through any API
    t.text('private_key').notNullable();
    // base64 SubjectPublicKeyInfo: the p= of the DKIM TXT record
    t.text('public_key').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['domain_id', 'selector']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domain_keys');
  await knex.schema.dropTable('domains');
}
