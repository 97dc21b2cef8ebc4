import type { Kysely } from 'kysely';

// Frozen once released: a change to the schema is a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  // The story of a lead for `leads trace`: every publish attempt, notification, status change, anonymisation.
  await db.schema
    .createTable('lead_events')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('lead_id', 'integer', (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('repeat_id', 'integer')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', 'integer', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('lead_events_lead').on('lead_events').columns(['lead_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lead_events').execute();
}
