import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  // Forum topics and routing by source: the topic (message_thread_id) of the forum supergroup the card
  // went into, beside the chat_id and message_id it already has. Null: the chat's General topic, a chat without
  // topics, and every card published before (they stay where they are; replies to them carry no topic).
  await db.schema.alterTable('leads').addColumn('card_thread_id', int64(db)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').dropColumn('card_thread_id').execute();
}
