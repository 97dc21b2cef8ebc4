import { type Kysely, sql } from 'kysely';
import { int64 } from '../dialect-sql';

const FALLBACK_COLUMNS = ['fallback_chat_id', 'fallback_message_id', 'fallback_sent_at', 'fallback_state'] as const;

// Frozen once released: a change to the schema is a new migration. (Where SQLite and PostgreSQL differ, the helpers
// of dialect-sql.ts give each its SQL; on SQLite exactly the SQL this migration always had.)
export async function up(db: Kysely<any>): Promise<void> {
  // Late leads: a request the landing kept in its spool while the server could not take it, replayed
  // later. created_at stays the visitor's time; received_at is when the server got it (for every other lead the
  // same time, so existing rows take created_at). late_route / late_reason: where the landing sent it then and why.
  // The fallback message (chat, message id, when Telegram took it) and what the outbox did with it (fallback_state:
  // 'pending' → 'adopted' as the card, or 'answer' → 'answered' / 'gone' / 'refused' / 'gave_up'), with the retry
  // columns of its reply.
  for (const table of ['leads', 'lead_repeats']) {
    await db.schema.alterTable(table).addColumn('received_at', int64(db)).execute();
    await db.schema.alterTable(table).addColumn('late_route', 'text').execute();
    await db.schema.alterTable(table).addColumn('late_reason', 'text').execute();
    await db.schema.alterTable(table).addColumn('fallback_chat_id', 'text').execute();
    await db.schema.alterTable(table).addColumn('fallback_message_id', int64(db)).execute();
    await db.schema.alterTable(table).addColumn('fallback_sent_at', int64(db)).execute();
    await db.schema.alterTable(table).addColumn('fallback_state', 'text').execute();
    await db.schema
      .alterTable(table)
      .addColumn('fallback_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable(table).addColumn('fallback_next_at', int64(db)).execute();
    await sql`update ${sql.table(table)} set received_at = created_at where received_at is null`.execute(db);
    // The outbox reads the fallback messages that wait for their reply, whose retry time has come.
    await db.schema
      .createIndex(`${table}_fallback_due`)
      .on(table)
      .column('fallback_next_at')
      .where(sql.ref('fallback_state'), '=', 'answer')
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'lead_repeats']) {
    await db.schema.dropIndex(`${table}_fallback_due`).execute();
    for (const c of ['received_at', 'late_route', 'late_reason', ...FALLBACK_COLUMNS, 'fallback_attempts', 'fallback_next_at']) {
      await db.schema.alterTable(table).dropColumn(c).execute();
    }
  }
}
