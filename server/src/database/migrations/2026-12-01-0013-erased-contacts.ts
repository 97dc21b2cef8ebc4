import { type Kysely, sql } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * Erasure that erases (docs/decisions.md, "Erasure that erases" and "Erased contacts are remembered, hashed, against late replays"):
 *  - `erased_contacts`: what `/stickers_forget` (and `npm run leads -- forget`) erased, held without the contact
 *    itself — a keyed hash (HMAC-SHA256 with LEADS_IP_SALT) of each normalised username and phone, and when it was
 *    last erased. A late replay of a request the visitor sent before that time is stored anonymised. A row lives as
 *    long as a late replay can come after its erasure (30 days, `LATE_MAX_AGE_MS`); housekeeping prunes it then.
 *  - the leads anonymised before `date`, `guests`, the UTM values and the referrer counted as personal lose them now,
 *    and their repeats lose every changed field, their address hash and source values, as an erasure does today.
 *    (The columns are named here, not taken from domain/personal-fields.ts: this migration must not change later.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('erased_contacts')
    .addColumn('contact_hash', 'text', (c) => c.primaryKey())
    .addColumn('erased_at', int64(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex('erased_contacts_erased_at').on('erased_contacts').column('erased_at').execute();

  await sql`
    update leads set date = null, guests = null, utm_source = null, utm_medium = null, utm_campaign = null,
      utm_content = null, utm_term = null, source_referrer = null,
      name = null, telegram = null, telegram_key = null, phone = null, comment = null, ip_hash = null
    where anonymised_at is not null`.execute(db);
  await sql`
    update lead_repeats set changes = '{}', ip_hash = null, utm_source = null, utm_medium = null, utm_campaign = null,
      utm_content = null, utm_term = null, source_referrer = null
    where lead_id in (select id from leads where anonymised_at is not null)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The values erased above are gone for good; only the table goes.
  await db.schema.dropTable('erased_contacts').execute();
}
