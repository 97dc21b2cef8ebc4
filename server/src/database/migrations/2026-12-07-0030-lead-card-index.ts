import { type Kysely, sql } from 'kysely';

// Frozen once released: a change to the schema is a new migration.

/**
 * The lead whose card a message is (a member's reply in the group, a late lead's fallback message): found by its chat
 * and message, not by reading every lead (about 10 ms at 100,000 leads for each reply in the group). Only published
 * leads have a message, so a new lead's insert writes no entry here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('leads_card')
    .on('leads')
    .columns(['chat_id', 'message_id'])
    .where(sql.ref('message_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_card').execute();
}
