import type { Knex } from 'knex';

// (filled in by the change that adds it; a no-op until then)
export async function up(knex: Knex): Promise<void> {
  void knex;
}

export async function down(knex: Knex): Promise<void> {
  void knex;
}
