import type { Kysely } from 'kysely';

// Frozen once released: a change to the schema is a new migration. A text column only, the same SQL on SQLite and
// PostgreSQL. PostgreSQL's `leads_submit` inserts a row's columns through `jsonb_populate_record` of the table's own
// type, so the new column reaches both runners with no change to the function.

export async function up(db: Kysely<any>): Promise<void> {
  // What came of the landing's captcha (`captcha` of POST /leads): `passed`, `unchecked` (its provider could not be
  // reached, the lead was delivered anyway), or null (no captcha configured; every lead stored before has none).
  // A repeat keeps its own, like its source.
  for (const table of ['leads', 'lead_repeats']) await db.schema.alterTable(table).addColumn('captcha', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'lead_repeats']) await db.schema.alterTable(table).dropColumn('captcha').execute();
}
