import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * "Continue in Telegram" (docs/decisions.md, "Telegram links: a hashed, single-use payload per answer"):
 * `telegram_links`, one row per link `POST /leads` answered with. The payload itself is never stored: `payload_hash`
 * is its SHA-256 (hex), so the table cannot be read back into working links. A row is bound to its lead (removed with
 * it), valid until `expires_at`, and used at most once (`used_at`); the Telegram account that opened it is kept on the
 * row (`tg_*`): the lead's account is that of its latest used link.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('telegram_links')
    .addColumn('payload_hash', 'text', (c) => c.primaryKey())
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('expires_at', int64(db), (c) => c.notNull())
    .addColumn('used_at', int64(db))
    .addColumn('tg_user_id', int64(db))
    .addColumn('tg_username', 'text')
    .addColumn('tg_first_name', 'text')
    .addColumn('tg_last_name', 'text')
    .execute();
  await db.schema.createIndex('telegram_links_lead').on('telegram_links').columns(['lead_id', 'used_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('telegram_links').execute();
}
