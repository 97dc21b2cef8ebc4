import type { Kysely } from 'kysely';

// Frozen once released: a change to the schema is a new migration.

/**
 * The history's rows of one kind in id order: the webhook recorder reads those not announced yet (`anonymised`,
 * `telegram_bound`) above an id, and without this index each pass scanned every row since the last such event.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('lead_events_kind').on('lead_events').columns(['kind', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lead_events_kind').execute();
}
