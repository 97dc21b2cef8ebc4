import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  // Webhook mode: the Telegram updates seen lately (the update id, when an instance took it, when it was handled),
  // shared by every instance, so that an update Telegram delivers again (after a slow answer) is handled once.
  // Pruned a day after it was seen (Telegram keeps an undelivered update at most 24 hours).
  await db.schema
    .createTable('telegram_updates')
    .addColumn('update_id', int64(db), (c) => c.primaryKey())
    .addColumn('seen_at', int64(db), (c) => c.notNull())
    .addColumn('handled_at', int64(db))
    .execute();
  await db.schema.createIndex('telegram_updates_seen_at').on('telegram_updates').column('seen_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('telegram_updates').execute();
}
