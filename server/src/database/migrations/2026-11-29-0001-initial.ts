import { type Kysely, sql } from 'kysely';
import { autoIncrementPrimaryKey, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL; on SQLite exactly the SQL this migration always had.)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('leads')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('request_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('telegram', 'text')
    .addColumn('telegram_key', 'text')
    .addColumn('phone', 'text')
    .addColumn('date', 'text')
    .addColumn('guests', 'text')
    .addColumn('comment', 'text')
    .addColumn('ip_hash', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('new'))
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('published_at', int64(db))
    .addColumn('chat_id', 'text')
    .addColumn('message_id', int64(db))
    .addColumn('publish_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', int64(db), (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('anonymised_at', int64(db))
    .addCheckConstraint('leads_status_known', sql`status in ('new', 'in_progress', 'won', 'lost', 'spam')`)
    .execute();
  // The repeat rule looks up recent leads by username or phone.
  await db.schema.createIndex('leads_telegram_key').on('leads').columns(['telegram_key', 'created_at']).execute();
  await db.schema.createIndex('leads_phone').on('leads').columns(['phone', 'created_at']).execute();
  // The outbox reads leads without a card whose retry time has come.
  await db.schema
    .createIndex('leads_unpublished')
    .on('leads')
    .columns(['next_attempt_at'])
    .where(sql.ref('published_at'), 'is', null)
    .execute();
  await db.schema.createIndex('leads_created_at').on('leads').column('created_at').execute();

  await db.schema
    .createTable('lead_repeats')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('request_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('ip_hash', 'text')
    .addColumn('notified_at', int64(db))
    .addColumn('notify_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', int64(db), (c) => c.notNull())
    .addColumn('last_error', 'text')
    .execute();
  await db.schema.createIndex('lead_repeats_lead').on('lead_repeats').columns(['lead_id', 'created_at']).execute();
  await db.schema
    .createIndex('lead_repeats_unnotified')
    .on('lead_repeats')
    .columns(['next_attempt_at'])
    .where(sql.ref('notified_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('rate_events')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('at', int64(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_events_key').on('rate_events').columns(['kind', 'key_hash', 'at']).execute();
  await db.schema.createIndex('rate_events_at').on('rate_events').columns(['kind', 'at']).execute();

  await db.schema
    .createTable('alert_throttles')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('last_sent_at', int64(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['alert_throttles', 'rate_events', 'lead_repeats', 'leads']) {
    await db.schema.dropTable(table).execute();
  }
}
