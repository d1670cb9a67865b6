import type { Knex } from 'knex';

// The dashboard's sign-in sessions. The browser holds a random session id in
// a cookie; only its SHA-256 is stored, as with API keys, so that a copy of
// the database opens no session. The key it was made with is never stored
// here or in the browser: a revoked key ends its sessions (ON DELETE and the
// revocation check at every page).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dashboard_sessions', (t) => {
    t.string('id_hash', 64).primary();
    t.string('key_id', 40).notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    // the token forms send back (CSRF), per session
    t.string('csrf_token', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dashboard_sessions');
}
