import type { Kysely } from 'kysely';

// Frozen once released: a change to the schema is a new migration.

/**
 * `GET /webhooks/events` pages the events newest first by `(at, id)`: read from this index, not by sorting every event
 * for each page (16–25 ms at 100,000 events).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_events_at').on('webhook_events').columns(['at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_events_at').execute();
}
