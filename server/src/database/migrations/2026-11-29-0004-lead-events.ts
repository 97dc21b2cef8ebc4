import type { Kysely } from 'kysely';
import { autoIncrementPrimaryKey, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL; on SQLite exactly the SQL this migration always had.)
export async function up(db: Kysely<any>): Promise<void> {
  // The story of a lead for `leads trace`: every publish attempt, notification, status change, anonymisation.
  await db.schema
    .createTable('lead_events')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('repeat_id', int64(db))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', int64(db), (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('lead_events_lead').on('lead_events').columns(['lead_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lead_events').execute();
}
