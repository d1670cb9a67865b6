import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('emails', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('environment', 8).notNullable();
    t.string('status', 16).notNullable();
    t.text('status_reason').nullable();
    t.text('from_header').notNullable();
    t.string('from_domain', 253).notNullable();
    t.text('to_list').notNullable();
    t.text('cc_list').notNullable();
    t.text('bcc_list').notNullable();
    t.text('reply_to').nullable();
    t.text('subject').notNullable();
    t.text('body_html').nullable();
    t.text('body_text').nullable();
    t.string('template_id', 64).nullable();
    t.integer('template_version').nullable();
    t.text('tags').notNullable();
    t.text('headers').notNullable();
    t.string('request_id', 40).notNullable();
    t.bigInteger('scheduled_at').nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('provider_message_id').nullable();
    // <…@outbound.hostname>, fixed at acceptance so that every attempt sends the same message
    t.text('message_id').notNullable();
    // first time a provider accepted the message (email.sent is emitted then, once)
    t.bigInteger('accepted_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['project_id', 'id']);
    t.index(['project_id', 'status', 'id']);
  });

  await knex.schema.createTable('email_recipients', (t) => {
    t.string('id', 40).primary();
    t.string('email_id', 40).notNullable().references('id').inTable('emails').onDelete('CASCADE');
    t.string('project_id', 40).notNullable();
    // the bare address, lower-cased domain; the display form stays in emails.*_list
    t.string('address', 320).notNullable();
    t.string('kind', 4).notNullable();
    t.string('status', 16).notNullable();
    // last server answer or simulated outcome: {reply, bounce_type, mx, …}
    t.text('details').nullable();
    // email.delivery_delayed is emitted once per recipient
    t.boolean('delay_notified').notNullable().defaultTo(false);
    t.bigInteger('updated_at').notNullable();
    t.index(['email_id']);
    t.index(['project_id', 'address', 'email_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_recipients');
  await knex.schema.dropTable('emails');
}
