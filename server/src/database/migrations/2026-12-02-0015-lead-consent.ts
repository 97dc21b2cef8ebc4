import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * The visitor's consent to the processing of personal data, as the landing sent it in `consent`: when it was given
 * (milliseconds since the epoch, like every time here) and the policy the form linked to (LANDING_PRIVACY_URL). Null
 * when the request had none: every lead stored before has none. Not personal: erasure keeps both, so the record
 * still shows that and when consent was given, and when it was erased (`anonymised_at`). A repeat keeps its own
 * (the lead keeps the first). Nothing else changes: `telegram` and `phone` were nullable from the start (an erased
 * lead has neither), so a lead with one contact needs no new column, and PostgreSQL's `leads_submit` inserts the new
 * columns by name (`leads_insert_row`) and matches a repeat with `=`, which never takes two nulls for the same person.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'lead_repeats']) {
    await db.schema.alterTable(table).addColumn('consent_accepted_at', int64(db)).execute();
    await db.schema.alterTable(table).addColumn('consent_policy_url', 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'lead_repeats']) {
    await db.schema.alterTable(table).dropColumn('consent_policy_url').execute();
    await db.schema.alterTable(table).dropColumn('consent_accepted_at').execute();
  }
}
