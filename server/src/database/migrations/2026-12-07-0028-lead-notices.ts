import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * `lead_notices`: the bot's own messages about a lead in its chat besides the card (the repeat ping, the reminder, the
 * inbox's answer, a not-delivered notice), so that a member's reply to one of them reaches the lead's visitor as a
 * reply to the card does. Ids only, no personal data; removed with the lead.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lead_notices')
    .addColumn('chat_id', 'text', (c) => c.notNull())
    .addColumn('message_id', int64(db), (c) => c.notNull())
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('lead_notices_pk', ['chat_id', 'message_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lead_notices').execute();
}
