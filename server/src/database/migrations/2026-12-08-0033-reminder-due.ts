import { type Kysely, sql } from 'kysely';

// Frozen once released: a change to the schema is a new migration.

/**
 * The cards a reminder may be due for (published, still `new`, never reminded, not erased), in id order: housekeeping
 * reads them every minute, and without this index it walked every lead still `new`, reminded or not (13 ms a pass with
 * 33,000 of 100,000 leads). A lead enters when its card is published and leaves with its reminder or its first status,
 * so a new lead's insert writes no entry and the index holds only the leads of the last reminder period.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('leads_reminder_due')
    .on('leads')
    // The status first, although every entry is `new`: SQLite, without statistics, takes an equality on an index's
    // first column over a scan of a partial index, and would rather read every `new` lead from `leads_status`.
    .columns(['status', 'id'])
    .where(sql<boolean>`status = 'new' and published_at is not null and reminded_at is null and anonymised_at is null`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_reminder_due').execute();
}
