import type { Knex } from 'knex';

// Received mail (CONTRACT §5): one row per project and message, the raw
// message kept whole (binary) so that /raw returns what arrived byte for byte
// and attachments are read from it on request. What the list and the
// webhook show is parsed once, at receipt.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('inbound_emails', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('mail_from').notNullable();
    // JSON arrays of addresses: the envelope recipients at this project's domains, the headers' To and Cc
    t.text('rcpt_to').notNullable();
    t.text('from_header').notNullable();
    t.text('to_header').notNullable();
    t.text('cc_header').notNullable();
    t.text('subject').notNullable();
    t.text('message_id').nullable();
    t.text('text').nullable();
    t.text('html').nullable();
    // JSON [[name, value], …] in order
    t.text('headers').notNullable();
    // JSON [{filename, content_type, size, content_id}]
    t.text('attachments').notNullable();
    t.integer('size').notNullable();
    t.binary('raw').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['project_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('inbound_emails');
}
