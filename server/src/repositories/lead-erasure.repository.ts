import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { parseRepeatChanges } from '../domain/lead';
import { erasedChanges, erasedLeadColumns, erasedRepeatColumns } from '../domain/personal-fields';
import type { Tx } from './transactor';

export type AnonymiseResult = 'done' | 'already' | 'unknown';

/** Erasure's queries: whose leads a contact has, what to remember of them, the erase itself, retention's due leads. */
@Injectable()
export class LeadErasureRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Erases the personal columns (`domain/personal-fields.ts`) of a lead and its repeats (their changed values too; the
   * names stay), keeps the lead for statistics and marks its card for rewriting; pending repeat pings become handled.
   * `trx`: the transaction that also writes the `anonymised` event; without it, a transaction of its own.
   */
  anonymise(leadId: number, now: number, trx?: Tx): Promise<AnonymiseResult> {
    const erase = async (ex: LeadsDb): Promise<AnonymiseResult> => {
      const lead = await ex.selectFrom('leads').select(['id', 'anonymised_at']).where('id', '=', leadId).executeTakeFirst();
      if (!lead) return 'unknown';
      if (lead.anonymised_at !== null) return 'already';
      await ex
        .updateTable('leads')
        .set({
          ...erasedLeadColumns(),
          anonymised_at: now,
          card_dirty_at: now,
        })
        .where('id', '=', leadId)
        .execute();
      // The Telegram account its "Continue in Telegram" link bound (the used row stays: the link cannot be used again).
      await ex
        .updateTable('telegram_links')
        .set({ tg_user_id: null, tg_username: null, tg_first_name: null, tg_last_name: null })
        .where('lead_id', '=', leadId)
        .execute();
      // Its conversation with the visitor (the outbox's rows that would send a message find none and end).
      await ex.deleteFrom('lead_messages').where('lead_id', '=', leadId).execute();
      const repeats = await ex.selectFrom('lead_repeats').select(['id', 'changes', 'notified_at']).where('lead_id', '=', leadId).execute();
      for (const r of repeats) {
        await ex
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
    };
    return trx ? erase(trx) : this.db.transaction().execute(erase);
  }

  /**
   * The contacts of a lead not yet anonymised: its username and phone and those its repeats changed to (each once),
   * read in the erasing transaction so that the erasure is recorded (hashed) for late replays.
   */
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

  /** Leads created before `cutoff` and not yet anonymised (retention). */
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

  /**
   * Erasure by contact: the leads not yet anonymised whose phone is `phone` or whose lower-cased username is
   * `telegramKey`, and those with a repeat that carried that phone or username in its changes. Oldest first.
   */
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
    const ids = new Set(direct.map((r) => r.id));
    for (const r of repeats) {
      const changes = JSON.parse(r.changes) as Record<string, unknown>;
      const phone = typeof changes.phone === 'string' ? changes.phone : null;
      const key = typeof changes.telegram === 'string' ? changes.telegram.toLowerCase() : null;
      if ((c.phone !== null && phone === c.phone) || (c.telegramKey !== null && key === c.telegramKey)) ids.add(r.lead_id);
    }
    return [...ids].sort((a, b) => a - b);
  }
}
