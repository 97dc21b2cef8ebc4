import { type Kysely, sql } from 'kysely';
import { autoIncrementPrimaryKey, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL; on SQLite exactly the SQL this migration always had.)
export async function up(db: Kysely<any>): Promise<void> {
  // A change that the card must show (status, anonymisation): set when it happens, cleared once the card shows it.
  await db.schema.alterTable('leads').addColumn('card_dirty_at', int64(db)).execute();
  await db.schema
    .alterTable('leads')
    .addColumn('card_refresh_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('leads').addColumn('card_refresh_next_at', int64(db)).execute();
  // The "still new after 30 min" reminder, once per lead.
  await db.schema.alterTable('leads').addColumn('reminded_at', int64(db)).execute();
  await db.schema
    .createIndex('leads_card_dirty')
    .on('leads')
    .column('card_refresh_next_at')
    .where(sql.ref('card_dirty_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('leads_status').on('leads').columns(['status', 'created_at']).execute();

  await db.schema
    .createTable('lead_status_changes')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('from_status', 'text', (c) => c.notNull())
    .addColumn('to_status', 'text', (c) => c.notNull())
    .addColumn('user_id', int64(db), (c) => c.notNull())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('at', int64(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex('lead_status_changes_lead').on('lead_status_changes').columns(['lead_id', 'at']).execute();

  // Once-per-period jobs (the daily digest): a row per period claimed, so a restart does not run it twice.
  await db.schema
    .createTable('job_runs')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('at', int64(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_runs').execute();
  await db.schema.dropTable('lead_status_changes').execute();
  await db.schema.dropIndex('leads_status').execute();
  await db.schema.dropIndex('leads_card_dirty').execute();
  for (const c of ['reminded_at', 'card_refresh_next_at', 'card_refresh_attempts', 'card_dirty_at']) {
    await db.schema.alterTable('leads').dropColumn(c).execute();
  }
}
