import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * A person bound to several leads chooses the one their messages go to (docs/decisions.md, "Several leads, one chat:
 * the latest, or the one chosen"): `telegram_links.chosen_at`, when they pressed that lead's button; the newest
 * choice or binding wins.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('telegram_links').addColumn('chosen_at', int64(db)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('telegram_links').dropColumn('chosen_at').execute();
}
