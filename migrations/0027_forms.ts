import type { Knex } from 'knex';

// Signup forms (issue 27; docs/forms.md). A submission waits in form_submissions until the person
// confirms it (double opt-in): its values are applied then, never before, so that nobody can
// change a known contact by typing its address. A contact a form made is `pending` until then;
// broadcasts skip pending contacts, and the retention job deletes those never confirmed.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contacts', (t) => {
    t.boolean('pending').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('forms', (t) => {
    t.string('id', 40).primary();
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    // deleting an audience a form adds to is refused (409) while the form exists
    t.string('audience_id', 40).notNullable().references('id').inTable('audiences');
    // JSON array: email, first_name, last_name and declared property keys, in page order
    t.text('fields').notNullable();
    t.boolean('double_opt_in').notNullable();
    t.string('from_address', 998).nullable();
    t.string('confirm_template_id', 200).nullable();
    t.string('redirect_url', 2000).nullable();
    // JSON array of origins (scheme://host[:port]) whose pages may POST JSON to the form
    t.text('allowed_origins').notNullable();
    // the mode of the key that made the form: its confirmation mail is live or test mail
    t.string('environment', 8).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['project_id', 'id']);
  });
  await knex.schema.createTable('form_submissions', (t) => {
    t.string('id', 40).primary();
    // a deleted form leaves its submissions for the pruning of the pending contacts they made
    t.string('form_id', 40).nullable().references('id').inTable('forms').onDelete('SET NULL');
    t.string('project_id', 40).notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.string('contact_id', 40).notNullable().references('id').inTable('contacts').onDelete('CASCADE');
    t.string('email', 320).notNullable();
    // JSON {first_name?, last_name?, properties}: applied to the contact at confirmation
    t.text('submitted').notNullable();
    // this submission made the contact (pending): it is deleted with it if never confirmed
    t.boolean('created_contact').notNullable();
    t.bigInteger('confirmed_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['form_id', 'email', 'created_at']);
    t.index(['contact_id']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('form_submissions');
  await knex.schema.dropTable('forms');
  // ALTER TABLE … DROP COLUMN (SQLite 3.35+, PostgreSQL), not knex's dropColumn: on SQLite that
  // rebuilds contacts inside the migration's transaction, where foreign_keys cannot be turned off,
  // and dropping the old table would cascade to audience memberships and topic choices. Nothing
  // references the column (form_submissions, which references contacts, is gone already).
  await knex.raw('ALTER TABLE contacts DROP COLUMN pending');
}
