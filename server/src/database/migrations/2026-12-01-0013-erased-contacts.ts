import type { Kysely } from 'kysely';

// Frozen once released: a change to the schema is a new migration.
export async function up(_db: Kysely<any>): Promise<void> {
  // (being written)
}

export async function down(_db: Kysely<any>): Promise<void> {
  // (being written)
}
