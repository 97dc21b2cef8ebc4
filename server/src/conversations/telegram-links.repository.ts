import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { TelegramAccount } from '../domain/telegram-account';
import { dirtyAfter } from '../repositories/leads.repository';

/**
 * Of a lead's bound accounts (`telegram_links as t` joined to `leads as l`), its visitor is the latest that has the
 * username the form gave, else the latest: a stranger who sent the same phone or username again and opened that
 * repeat's link is not the one the card names, nor the one a reply to the card reaches.
 */
export const TYPED_ACCOUNT = sql<number>`case when '@' || lower(t.tg_username) = l.telegram_key then 1 else 0 end`;

/** What a `/start <payload>` came to. */
type BindResult =
  | { kind: 'bound'; leadId: number }
  /** The link was used by this very account, which is still bound by it: nothing changes. */
  | { kind: 'bound_before'; leadId: number }
  /** The link was used by this very account, which has sent `/stop` since. */
  | { kind: 'stopped_before' }
  /** No such payload, its time is over, it was used before (by another account, or stopped), or its lead was erased. */
  | { kind: 'unknown' | 'expired' | 'used' | 'erased' };

/** The links `POST /leads` answers with, by the SHA-256 of their payload, and the account each bound. */
@Injectable()
export class TelegramLinksRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Stores the link unless its lead is erased (a link to it could never bind); false: not stored. */
  async add(link: { payload_hash: string; lead_id: number; created_at: number; expires_at: number }): Promise<boolean> {
    const stored = await this.db
      .insertInto('telegram_links')
      .columns(['payload_hash', 'lead_id', 'created_at', 'expires_at'])
      .expression((eb) =>
        eb
          .selectFrom('leads')
          .select([
            sql<string>`cast(${link.payload_hash} as text)`.as('payload_hash'),
            'id',
            sql<number>`cast(${link.created_at} as bigint)`.as('created_at'),
            sql<number>`cast(${link.expires_at} as bigint)`.as('expires_at'),
          ])
          .where('id', '=', link.lead_id)
          .where('anonymised_at', 'is', null),
      )
      .executeTakeFirst();
    return Number(stored.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Uses the link once: marks it used with the account, the lead's card for a rewrite and as changed, and a `telegram_bound` event. */
  bind(payloadHash: string, account: TelegramAccount, now: number, detail: string): Promise<BindResult> {
    return this.db.transaction().execute(async (trx): Promise<BindResult> => {
      const link = await trx
        .selectFrom('telegram_links as k')
        .innerJoin('leads as l', 'l.id', 'k.lead_id')
        .select(['k.lead_id', 'k.expires_at', 'k.used_at', 'k.tg_user_id', 'k.stopped_at', 'l.anonymised_at'])
        .where('k.payload_hash', '=', payloadHash)
        .executeTakeFirst();
      if (!link) return { kind: 'unknown' };
      if (link.used_at !== null) {
        if (link.tg_user_id !== account.id || link.anonymised_at !== null) return { kind: 'used' };
        return link.stopped_at === null ? { kind: 'bound_before', leadId: link.lead_id } : { kind: 'stopped_before' };
      }
      if (link.expires_at <= now) return { kind: 'expired' };
      if (link.anonymised_at !== null) return { kind: 'erased' };
      const used = await trx
        .updateTable('telegram_links')
        .set({
          used_at: now,
          tg_user_id: account.id,
          tg_username: account.username,
          tg_first_name: account.first_name,
          tg_last_name: account.last_name,
        })
        .where('payload_hash', '=', payloadHash)
        .where('used_at', 'is', null)
        // An erasure committed since the read above: nothing personal is stored on an erased lead.
        .where((eb) => eb.exists(eb.selectFrom('leads').select('id').where('id', '=', link.lead_id).where('anonymised_at', 'is', null)))
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) return { kind: 'used' };
      // GET /leads shows the account from now on: a change `updated_since` finds (moved forward, by 1 ms at least).
      await trx
        .updateTable('leads')
        .set((eb) => ({
          card_dirty_at: dirtyAfter(now),
          updated_at: eb
            .case()
            .when('updated_at', '<', now)
            .then(now)
            .else(eb('updated_at', '+', 1))
            .end(),
        }))
        .where('id', '=', link.lead_id)
        .execute();
      await trx
        .insertInto('lead_events')
        .values({ lead_id: link.lead_id, repeat_id: null, kind: 'telegram_bound', at: now, detail })
        .execute();
      return { kind: 'bound', leadId: link.lead_id };
    });
  }

  /** Each lead's visitor (`TYPED_ACCOUNT`), for the leads that have one bound. */
  async accountsOf(leadIds: readonly number[]): Promise<Map<number, TelegramAccount>> {
    const found = new Map<number, TelegramAccount>();
    if (leadIds.length === 0) return found;
    const rows = await this.db
      .selectFrom('telegram_links as t')
      .innerJoin('leads as l', 'l.id', 't.lead_id')
      .select(['t.lead_id', 't.tg_user_id', 't.tg_username', 't.tg_first_name', 't.tg_last_name'])
      .where('t.lead_id', 'in', [...leadIds])
      .where('t.used_at', 'is not', null)
      // The last of each lead's rows wins.
      .orderBy(TYPED_ACCOUNT)
      .orderBy('t.used_at')
      .execute();
    for (const r of rows) {
      if (r.tg_user_id === null) continue;
      found.set(r.lead_id, { id: r.tg_user_id, username: r.tg_username, first_name: r.tg_first_name, last_name: r.tg_last_name });
    }
    return found;
  }
}
