import { Injectable } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import { parseRepeatChanges } from '../domain/lead';
import { erasedChanges, erasedLeadColumns, erasedRepeatColumns } from '../domain/personal-fields';
import { dirtyAfter } from './leads.repository';
import { SUBMIT_LOCK_KEY } from './submit-runner';
import type { Tx } from './transactor';

export type AnonymiseResult = 'done' | 'already' | 'unknown';

/** Erasure's queries: whose leads a contact has, the erase itself, retention's due leads, and the erased contacts' hashes. */
@Injectable()
export class LeadErasureRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** The first statement of an erasing transaction: no submit decision runs beside it (SQLite's `BEGIN IMMEDIATE` does so). */
  async holdSubmits(trx: Tx): Promise<void> {
    if (dialectOf(this.db) === 'postgres') await sql`select pg_advisory_xact_lock(${SUBMIT_LOCK_KEY})`.execute(trx);
  }

  /** These contacts were erased at `at`; a contact erased before keeps the later of the two times. */
  async recordErased(hashes: readonly string[], at: number, trx: Tx): Promise<void> {
    for (const contact_hash of new Set(hashes)) {
      await trx
        .insertInto('erased_contacts')
        .values({ contact_hash, erased_at: at })
        .onConflict((oc) => oc.column('contact_hash').doUpdateSet({ erased_at: at }).where('erased_contacts.erased_at', '<', at))
        .execute();
    }
  }

  /** The SQLite decision's: whether any of a submission's contact hashes was erased at or after `submittedAt`. */
  static sqliteErasedSince(sqlite: BetterSqlite3.Database): (hashes: readonly string[], submittedAt: number) => boolean {
    const statement = sqlite.prepare(
      'select 1 from erased_contacts where erased_at >= ? and contact_hash in (select value from json_each(?)) limit 1',
    );
    return (hashes, submittedAt) => hashes.length > 0 && statement.get(submittedAt, JSON.stringify(hashes)) !== undefined;
  }

  /** Drops the erasures no late replay can precede any more; how many. */
  async pruneErasedBefore(cutoff: number): Promise<number> {
    const result = await this.db.deleteFrom('erased_contacts').where('erased_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Erases the personal columns of a lead and its repeats (their changed values too), keeps the lead for statistics and
   * marks its card for rewriting; pending repeat pings become handled; in the caller's transaction.
   */
  async anonymise(leadId: number, now: number, trx: Tx): Promise<AnonymiseResult> {
    const lead = await trx.selectFrom('leads').select(['id', 'anonymised_at']).where('id', '=', leadId).executeTakeFirst();
    if (!lead) return 'unknown';
    if (lead.anonymised_at !== null) return 'already';
    await trx
      .updateTable('leads')
      .set({ ...erasedLeadColumns(), anonymised_at: now, card_dirty_at: dirtyAfter(now) })
      .where('id', '=', leadId)
      .execute();
    // The Telegram account its "Continue in Telegram" link bound (the used row stays: the link cannot be used again).
    await trx
      .updateTable('telegram_links')
      .set({ tg_user_id: null, tg_username: null, tg_first_name: null, tg_last_name: null })
      .where('lead_id', '=', leadId)
      .execute();
    // Its conversation with the visitor (the outbox's rows that would send a message find none and end).
    await trx.deleteFrom('lead_messages').where('lead_id', '=', leadId).execute();
    const repeats = await trx.selectFrom('lead_repeats').select(['id', 'changes', 'notified_at']).where('lead_id', '=', leadId).execute();
    for (const r of repeats) {
      await trx
        .updateTable('lead_repeats')
        .set({
          ...erasedRepeatColumns(),
          changes: JSON.stringify(erasedChanges(parseRepeatChanges(r.changes))),
          ...(r.notified_at === null ? { notified_at: now, notify_outcome: 'skipped' as const } : {}),
        })
        .where('id', '=', r.id)
        .execute();
    }
    return 'done';
  }

  /** The contacts of a lead not yet anonymised, its repeats' changes too (each once), read in the erasing transaction. */
  async contactsOf(leadId: number, trx: Tx): Promise<{ telegrams: string[]; phones: string[] }> {
    const lead = await trx
      .selectFrom('leads')
      .select(['telegram', 'phone'])
      .where('id', '=', leadId)
      .where('anonymised_at', 'is', null)
      .executeTakeFirst();
    if (!lead) return { telegrams: [], phones: [] };
    const telegrams = new Set<string>(lead.telegram ? [lead.telegram] : []);
    const phones = new Set<string>(lead.phone ? [lead.phone] : []);
    for (const r of await trx.selectFrom('lead_repeats').select('changes').where('lead_id', '=', leadId).execute()) {
      const changes = parseRepeatChanges(r.changes);
      if (typeof changes.telegram === 'string' && changes.telegram) telegrams.add(changes.telegram);
      if (typeof changes.phone === 'string' && changes.phone) phones.add(changes.phone);
    }
    return { telegrams: [...telegrams], phones: [...phones] };
  }

  /** Retention's: leads created before `cutoff` and not yet anonymised. */
  async expired(cutoff: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('leads')
      .select('id')
      .where('created_at', '<', cutoff)
      .where('anonymised_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** The leads not yet anonymised of this phone or lower-cased username, their repeats' changes too; oldest first. */
  async leadsOfContact(c: { phone: string | null; telegramKey: string | null }): Promise<number[]> {
    const direct = await this.db
      .selectFrom('leads')
      .select('id')
      .where('anonymised_at', 'is', null)
      .where((eb) =>
        eb.or([
          ...(c.phone !== null ? [eb('phone', '=', c.phone)] : []),
          ...(c.telegramKey !== null ? [eb('telegram_key', '=', c.telegramKey)] : []),
        ]),
      )
      .execute();
    const needle = c.phone ?? c.telegramKey ?? '';
    const repeats = needle
      ? await this.db
          .selectFrom('lead_repeats as r')
          .innerJoin('leads as l', 'l.id', 'r.lead_id')
          .select(['r.lead_id', 'r.changes'])
          .where('l.anonymised_at', 'is', null)
          // A prefilter (lower() on both sides, as PostgreSQL's LIKE minds case; `_` in a username matches any
          // character): the exact match is below.
          .where((eb) => eb(eb.fn<string>('lower', ['r.changes']), 'like', `%${needle.toLowerCase()}%`))
          .execute()
      : [];
    // A username is also the account the visitor bound through the bot's link (the form may have said another);
    // Telegram's username has no `@`, the key has.
    const username = c.telegramKey?.replace(/^@/, '') ?? null;
    const bound =
      username !== null
        ? await this.db
            .selectFrom('telegram_links as k')
            .innerJoin('leads as l', 'l.id', 'k.lead_id')
            .select('k.lead_id as id')
            .where('l.anonymised_at', 'is', null)
            .where('k.used_at', 'is not', null)
            .where((eb) => eb(eb.fn<string>('lower', ['k.tg_username']), '=', username))
            .execute()
        : [];
    const ids = new Set([...direct, ...bound].map((r) => r.id));
    for (const r of repeats) {
      const changes = parseRepeatChanges(r.changes);
      const phone = typeof changes.phone === 'string' ? changes.phone : null;
      const key = typeof changes.telegram === 'string' ? changes.telegram.toLowerCase() : null;
      if ((c.phone !== null && phone === c.phone) || (c.telegramKey !== null && key === c.telegramKey)) ids.add(r.lead_id);
    }
    return [...ids].sort((a, b) => a - b);
  }
}
