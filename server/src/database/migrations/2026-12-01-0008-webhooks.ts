import { type Kysely, sql } from 'kysely';
import { autoIncrementPrimaryKey, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL.)
export async function up(db: Kysely<any>): Promise<void> {
  // Signed webhooks. Each event type is announced from the rows that record its change — leads,
  // lead_repeats, lead_status_changes, lead_events of kind 'anonymised' — and only from the rows above `since_id`,
  // the highest id when webhooks were first configured (history is never announced).
  await db.schema
    .createTable('webhook_sources')
    .addColumn('type', 'text', (c) => c.primaryKey())
    .addColumn('since_id', int64(db), (c) => c.notNull())
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .execute();

  // One row per announced change (unique per type and source row, so announcing twice is impossible); `public_id` is
  // the body's `id`; `data` holds the event's own facts as JSON, never personal data.
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('source_id', int64(db), (c) => c.notNull())
    .addColumn('at', int64(db), (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addUniqueConstraint('webhook_events_source', ['type', 'source_id'])
    .execute();
  await db.schema.createIndex('webhook_events_lead').on('webhook_events').columns(['lead_id', 'id']).execute();

  // The durable outbox: one row per event and endpoint (and per replay), retried until the endpoint answers 2xx.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('event_id', int64(db), (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('lead_id', int64(db), (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('replayed_at', int64(db))
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('attempts', int64(db), (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', int64(db), (c) => c.notNull())
    .addColumn('first_failed_at', int64(db))
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', int64(db))
    .execute();
  // The pass reads the due deliveries of each endpoint, and for each whether an earlier one of its lead still waits.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['endpoint', 'next_attempt_at'])
    .where(sql.ref('delivered_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_waiting')
    .on('webhook_deliveries')
    .columns(['lead_id', 'endpoint', 'id'])
    .where(sql.ref('delivered_at'), 'is', null)
    .execute();
  await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_sources').execute();
}
