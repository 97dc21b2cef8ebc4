import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL; on SQLite exactly the SQL this migration always had.)
export async function up(db: Kysely<any>): Promise<void> {
  // 'html' normally; 'plain' when Telegram refused the HTML and the card went out as plain text (later edits follow).
  await db.schema.alterTable('leads').addColumn('card_format', 'text').execute();
  await db.schema.alterTable('leads').addColumn('status_changed_by', 'text').execute();
  await db.schema.alterTable('leads').addColumn('status_changed_at', int64(db)).execute();
  // How a repeat was handled: 'pinged' (card edited, reply sent), 'in_card' (in the first card, no ping),
  // 'skipped' (lead spam or anonymised), 'gave_up' (5 failures).
  await db.schema.alterTable('lead_repeats').addColumn('notify_outcome', 'text').execute();
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', int64(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('settings').execute();
  await db.schema.alterTable('lead_repeats').dropColumn('notify_outcome').execute();
  for (const c of ['status_changed_at', 'status_changed_by', 'card_format']) await db.schema.alterTable('leads').dropColumn(c).execute();
}
