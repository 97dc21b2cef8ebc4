import type { Kysely } from 'kysely';

/** The columns of where a lead (or a repeat) came from, in the order of `SOURCE_KEYS` of @stickers/shared. */
const SOURCE_COLUMNS = ['source_landing', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'source_referrer'];

// Frozen once released: a change to the schema is a new migration. Text columns only, the same SQL on SQLite and
// PostgreSQL (no integer column: no dialect helper needed).
export async function up(db: Kysely<any>): Promise<void> {
  // Where a lead came from: the landing's name (LANDING_SOURCE), the UTM parameters of the page URL and
  // the referrer's host, as the landing sent them in `source`. Null when not sent: every lead stored before has none.
  // A repeat keeps its own (the visitor may come back from another campaign); the card and reports use the lead's.
  for (const table of ['leads', 'lead_repeats']) {
    for (const column of SOURCE_COLUMNS) await db.schema.alterTable(table).addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'lead_repeats']) {
    for (const column of SOURCE_COLUMNS) await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
