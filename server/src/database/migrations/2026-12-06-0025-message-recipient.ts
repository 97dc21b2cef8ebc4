import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * A team message's recipient (docs/decisions.md, "A reply goes to whom it answers"): `lead_messages.to_tg_id`, the
 * Telegram account a member's reply to a relayed message answers (that message's author); null: the lead's visitor,
 * its latest binding (a reply to the card, the inbox's message).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lead_messages').addColumn('to_tg_id', int64(db)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lead_messages').dropColumn('to_tg_id').execute();
}
