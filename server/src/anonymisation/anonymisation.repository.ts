import { Injectable } from '@nestjs/common';
import { LEAD_FIELDS } from '@stickers/shared';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** The visitor's personal fields: erased on anonymisation. Date and guests stay for statistics. */
export const PERSONAL_FIELDS = ['name', 'telegram', 'phone', 'comment'] as const;
const KEPT_FIELDS = LEAD_FIELDS.filter((f) => !(PERSONAL_FIELDS as readonly string[]).includes(f));

export type AnonymiseResult = 'done' | 'already' | 'unknown';

@Injectable()
export class AnonymisationRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Erases a lead's personal fields and ip_hash (and those of its repeats), keeps the lead for statistics, and
   * marks the card for rewriting. Pending repeat notifications become handled: there is nothing left to show.
   */
  async anonymise(leadId: number, now: number): Promise<AnonymiseResult> {
    return this.db.transaction().execute(async (trx) => {
      const lead = await trx.selectFrom('leads').select(['id', 'anonymised_at']).where('id', '=', leadId).executeTakeFirst();
      if (!lead) return 'unknown';
      if (lead.anonymised_at !== null) return 'already';
      await trx
        .updateTable('leads')
        .set({
          name: null,
          telegram: null,
          telegram_key: null,
          phone: null,
          comment: null,
          ip_hash: null,
          anonymised_at: now,
          card_dirty_at: now,
          card_refresh_attempts: 0,
          card_refresh_next_at: now,
        })
        .where('id', '=', leadId)
        .execute();
      const repeats = await trx.selectFrom('lead_repeats').select(['id', 'changes', 'notified_at']).where('lead_id', '=', leadId).execute();
      for (const r of repeats) {
        const changes = JSON.parse(r.changes) as Record<string, string>;
        const kept = Object.fromEntries(Object.entries(changes).filter(([k]) => (KEPT_FIELDS as string[]).includes(k)));
        await trx
          .updateTable('lead_repeats')
          .set({
            changes: JSON.stringify(kept),
            ip_hash: null,
            ...(r.notified_at === null ? { notified_at: now, notify_outcome: 'skipped' as const } : {}),
          })
          .where('id', '=', r.id)
          .execute();
      }
      await trx
        .insertInto('lead_events')
        .values({ lead_id: leadId, kind: 'anonymised', at: now, detail: 'personal fields erased' })
        .execute();
      return 'done';
    });
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
}
