import { type Kysely, sql } from 'kysely';
import { autoIncrementPrimaryKey, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * "Continue in Telegram", the conversation (docs/architecture.md, "The conversation"): `lead_messages`, one row per
 * message between the visitor and the team — `in` from the visitor's private chat with the bot, `out` from a member's
 * reply in the group or from the inbox — with its author, text or caption, media kind, the Telegram chat and message
 * of the original and of the copy once sent, and its state (`queued`, `delivered`, `failed` with the error). Each row
 * is sent by an outbox row (`visitor_message`, `team_message`) that names it in the new `outbox.message_id`.
 * `telegram_links` gains `stopped_at` (the visitor sent `/stop`: the bot no longer writes to them for that lead) and
 * `blocked_at` (Telegram answered that the visitor blocked the bot).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lead_messages')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('author_tg_id', int64(db))
    .addColumn('author_name', 'text')
    .addColumn('at', int64(db), (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('media', 'text')
    .addColumn('tg_chat_id', 'text')
    .addColumn('tg_message_id', int64(db))
    .addColumn('copy_chat_id', 'text')
    .addColumn('copy_message_id', int64(db))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('lead_messages_lead').on('lead_messages').columns(['lead_id', 'id']).execute();
  await db.schema
    .createIndex('lead_messages_copy')
    .on('lead_messages')
    .columns(['copy_chat_id', 'copy_message_id'])
    .where(sql.ref('copy_message_id'), 'is not', null)
    .execute();
  // A Telegram message is stored once: an update handled again (a crash before its offset was confirmed) adds nothing.
  // The inbox's messages have no Telegram ids: nulls are distinct in a unique index, on both databases.
  await db.schema.createIndex('lead_messages_original').on('lead_messages').columns(['tg_chat_id', 'tg_message_id']).unique().execute();
  await db.schema.alterTable('outbox').addColumn('message_id', int64(db)).execute();
  await db.schema.alterTable('telegram_links').addColumn('stopped_at', int64(db)).execute();
  await db.schema.alterTable('telegram_links').addColumn('blocked_at', int64(db)).execute();
  await db.schema.createIndex('telegram_links_user').on('telegram_links').columns(['tg_user_id', 'used_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('telegram_links_user').execute();
  await db.schema.alterTable('telegram_links').dropColumn('blocked_at').execute();
  await db.schema.alterTable('telegram_links').dropColumn('stopped_at').execute();
  await db.schema.alterTable('outbox').dropColumn('message_id').execute();
  await db.schema.dropTable('lead_messages').execute();
}
