import { Injectable } from '@nestjs/common';
import { type Insertable, type Selectable, sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import type { Database } from '../database/schema';
import { dirtyAfter } from '../repositories/leads.repository';
import { TELEGRAM_TARGET } from '../repositories/outbox.repository';
import { TYPED_ACCOUNT } from './telegram-links.repository';
import type { Tx } from '../repositories/transactor';

export type LeadMessage = Selectable<Database['lead_messages']>;
type NewLeadMessage = Omit<Insertable<Database['lead_messages']>, 'state' | 'error' | 'copy_chat_id' | 'copy_message_id'>;

const BINDING_COLUMNS = ['lead_id', 'tg_user_id', 'tg_username', 'tg_first_name', 'tg_last_name', 'stopped_at', 'blocked_at'] as const;

/** The visitor bound to a lead (`TYPED_ACCOUNT`), and whether they stopped or blocked the bot. */
export type Binding = Pick<Selectable<Database['telegram_links']>, (typeof BINDING_COLUMNS)[number]> & { tg_user_id: number };

/** `lead_messages`, each stored with the outbox row that sends it, and the bindings they go along. */
@Injectable()
export class LeadMessagesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Stores a message, queued, with its outbox row; a Telegram message stored before is not again (that row is given); null
   * when the lead is erased (nothing personal is stored on an erased lead). The lead's row is read `for share` on
   * PostgreSQL, so an erasure either commits first (and this stores nothing) or waits and deletes this message too.
   */
  add(message: NewLeadMessage): Promise<LeadMessage | null> {
    return this.db.transaction().execute(async (trx) => {
      const lead = await trx
        .selectFrom('leads')
        .select('anonymised_at')
        .where('id', '=', message.lead_id)
        .$if(dialectOf(this.db) === 'postgres', (q) => q.forShare())
        .executeTakeFirst();
      if (!lead || lead.anonymised_at !== null) return null;
      const row = await trx
        .insertInto('lead_messages')
        .values({ ...message, state: 'queued' })
        .onConflict((oc) => oc.columns(['tg_chat_id', 'tg_message_id']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row)
        return trx
          .selectFrom('lead_messages')
          .selectAll()
          .where('tg_chat_id', '=', message.tg_chat_id!)
          .where('tg_message_id', '=', message.tg_message_id!)
          .executeTakeFirstOrThrow();
      await trx
        .insertInto('outbox')
        .values({
          kind: message.direction === 'in' ? 'visitor_message' : 'team_message',
          lead_id: message.lead_id,
          message_id: row.id,
          target: TELEGRAM_TARGET,
          created_at: message.at,
          next_at: 0,
        })
        .execute();
      return row;
    });
  }

  find(id: number): Promise<LeadMessage | undefined> {
    return this.db.selectFrom('lead_messages').selectAll().where('id', '=', id).executeTakeFirst();
  }

  of(leadId: number): Promise<LeadMessage[]> {
    return this.db.selectFrom('lead_messages').selectAll().where('lead_id', '=', leadId).orderBy('id').execute();
  }

  /** The message whose copy is this one: a visitor's in the group (or its notice), a team's in the visitor's chat. */
  byCopy(chatId: string, messageId: number): Promise<LeadMessage | undefined> {
    return this.db
      .selectFrom('lead_messages')
      .selectAll()
      .where('copy_chat_id', '=', chatId)
      .where('copy_message_id', '=', messageId)
      .executeTakeFirst();
  }

  async delivered(id: number, copy: { chatId: string; messageId: number }): Promise<void> {
    await this.db
      .updateTable('lead_messages')
      .set({ state: 'delivered', error: null, copy_chat_id: copy.chatId, copy_message_id: copy.messageId })
      .where('id', '=', id)
      .execute();
  }

  async failed(id: number, error: string): Promise<void> {
    await this.db.updateTable('lead_messages').set({ state: 'failed', error }).where('id', '=', id).execute();
  }

  /** That account blocked the bot: its bindings to the lead say so, and the card is marked for a rewrite. */
  async blocked(leadId: number, userId: number, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('telegram_links')
        .set({ blocked_at: now })
        .where('lead_id', '=', leadId)
        .where('tg_user_id', '=', userId)
        .where('used_at', 'is not', null)
        .execute();
      await this.cardsChanged(trx, [{ lead_id: leadId }], now);
    });
  }

  /** The lead's visitor (`TYPED_ACCOUNT`; `userId`: that account's binding to it), of the used links that name an account. */
  async bindingOf(leadId: number, userId: number | null = null): Promise<Binding | null> {
    const row = await this.db
      .selectFrom('telegram_links as t')
      .innerJoin('leads as l', 'l.id', 't.lead_id')
      .select(BINDING_COLUMNS.map((c) => `t.${c}` as const))
      .where('t.lead_id', '=', leadId)
      .$if(userId !== null, (q) => q.where('t.tg_user_id', '=', userId))
      .where('t.used_at', 'is not', null)
      .where('t.tg_user_id', 'is not', null)
      .$narrowType<{ tg_user_id: number }>()
      .orderBy(TYPED_ACCOUNT, 'desc')
      .orderBy('t.used_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ?? null;
  }

  /** The lead a person's private messages go to: of their active bindings, the one chosen last, else the latest bound. */
  async latestLeadOf(userId: number): Promise<Binding | null> {
    const row = await this.activeLinksOf(userId)
      .select(BINDING_COLUMNS.map((c) => `t.${c}` as const))
      .$narrowType<{ tg_user_id: number }>()
      .orderBy(sql`coalesce(t.chosen_at, t.used_at)`, 'desc')
      // At the same millisecond: a choice over a binding, then the newer lead.
      .orderBy(sql`(t.chosen_at is not null)`, 'desc')
      .orderBy('t.lead_id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ?? null;
  }

  /** The leads a person's messages may go to, oldest binding first. */
  async activeLeadsOf(userId: number): Promise<number[]> {
    const rows = await this.activeLinksOf(userId).select('t.lead_id').orderBy('t.used_at').orderBy('t.lead_id').execute();
    return [...new Set(rows.map((r) => r.lead_id))];
  }

  /** The person's messages go to `leadId` from now on; false when they are not bound to it (or it is over). */
  async choose(userId: number, leadId: number, now: number): Promise<boolean> {
    if (!(await this.activeLeadsOf(userId)).includes(leadId)) return false;
    await this.db
      .updateTable('telegram_links')
      .set({ chosen_at: now })
      .where('tg_user_id', '=', userId)
      .where('lead_id', '=', leadId)
      .where('used_at', 'is not', null)
      .execute();
    return true;
  }

  private activeLinksOf(userId: number) {
    return this.db
      .selectFrom('telegram_links as t')
      .innerJoin('leads as l', 'l.id', 't.lead_id')
      .where('t.tg_user_id', '=', userId)
      .where('t.used_at', 'is not', null)
      .where('t.stopped_at', 'is', null)
      .where('l.anonymised_at', 'is', null);
  }

  /**
   * Per lead of `leadIds` (those with any): the visitor's messages since the team's last one that did not fail, the ones
   * nobody answered, while their author is bound to the lead still (after `/stop` nobody can answer them).
   */
  async waiting(leadIds: number[]): Promise<Map<number, number>> {
    if (leadIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('lead_messages as m')
      .select(['m.lead_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('m.lead_id', 'in', leadIds)
      .where('m.direction', '=', 'in')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('lead_messages as o')
              .select('o.id')
              .whereRef('o.lead_id', '=', 'm.lead_id')
              .where('o.direction', '=', 'out')
              .where('o.state', '!=', 'failed')
              .whereRef('o.id', '>', 'm.id'),
          ),
        ),
      )
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('telegram_links as t')
            .select('t.lead_id')
            .whereRef('t.lead_id', '=', 'm.lead_id')
            .whereRef('t.tg_user_id', '=', 'm.author_tg_id')
            .where('t.stopped_at', 'is', null),
        ),
      )
      .groupBy('m.lead_id')
      .execute();
    return new Map(rows.map((r) => [r.lead_id, Number(r.n)]));
  }

  /** Whether the person stopped a lead of theirs with `/stop` (and has not sent `/start` since). */
  async hasStopped(userId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('telegram_links')
      .select('lead_id')
      .where('tg_user_id', '=', userId)
      .where('used_at', 'is not', null)
      .where('stopped_at', 'is not', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** `/stop`: stops every lead the person is bound to, its card marked for a rewrite; gives the leads stopped. */
  stop(userId: number, now: number): Promise<number[]> {
    return this.setStopped(userId, now, true);
  }

  /** `/start` after `/stop`: the person's stopped leads run again (an erased lead's links name nobody); gives them. */
  resume(userId: number, now: number): Promise<number[]> {
    return this.setStopped(userId, now, false);
  }

  private setStopped(userId: number, now: number, stop: boolean): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('telegram_links')
        .set({ stopped_at: stop ? now : null })
        .where('tg_user_id', '=', userId)
        .where('used_at', 'is not', null)
        .where('stopped_at', stop ? 'is' : 'is not', null)
        .returning('lead_id')
        .execute();
      return this.cardsChanged(trx, rows, now);
    });
  }

  /** That account wrote to the bot: none of its bindings is blocked any more, and their cards are marked for a rewrite. */
  async unblocked(userId: number, now: number): Promise<void> {
    const marked = await this.db
      .selectFrom('telegram_links')
      .select('lead_id')
      .where('tg_user_id', '=', userId)
      .where('blocked_at', 'is not', null)
      .executeTakeFirst();
    if (!marked) return;
    await this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('telegram_links')
        .set({ blocked_at: null })
        .where('tg_user_id', '=', userId)
        .where('blocked_at', 'is not', null)
        .returning('lead_id')
        .execute();
      await this.cardsChanged(trx, rows, now);
    });
  }

  /** The leads of the bindings a change touched, their cards marked for a rewrite; gives them. */
  private async cardsChanged(trx: Tx, rows: { lead_id: number }[], now: number): Promise<number[]> {
    const leads = [...new Set(rows.map((r) => r.lead_id))];
    if (leads.length > 0)
      await trx
        .updateTable('leads')
        .set({ card_dirty_at: dirtyAfter(now) })
        .where('id', 'in', leads)
        .execute();
    return leads;
  }
}
