import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { LeadEventKind } from '../database/schema';
import type { FallbackState, Lead, LeadRepeat, RepeatOutcome } from '../domain/lead';
import type { LeadStatus } from '../domain/lead-status';
import { TELEGRAM_TARGET } from './outbox.repository';
import { countRows, type Tx } from './transactor';

/** The history's user id of a change an integrator made (`POST /leads/{n}/status`): no Telegram user has it. */
export const CRM_USER_ID = 0;

/** A press: the status goes from `from` to `to` if nobody was first. */
export interface StatusChange {
  leadId: number;
  from: LeadStatus;
  to: LeadStatus;
  userId: number;
  userName: string;
  at: number;
}

export type FallbackAnswerEnd = Extract<FallbackState, 'answered' | 'gone' | 'refused' | 'gave_up'>;

/**
 * `card_dirty_at` for a change at `now`: past the change it replaces by 1 ms at least, so an edit that read that one
 * never clears this one, and the outbox's trigger sees a new change.
 */
export const dirtyAfter = (now: number) => sql<number>`case when card_dirty_at >= ${now} then card_dirty_at + 1 else ${now} end`;

/** The queries on one lead, its repeats and its story. */
@Injectable()
export class LeadsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Appends to a lead's story (never personal data); `trx`: when it must commit with the change it tells of. */
  async recordEvent(
    leadId: number,
    kind: LeadEventKind,
    at: number,
    detail: string | null = null,
    repeatId: number | null = null,
    trx?: Tx,
  ): Promise<void> {
    await (trx ?? this.db).insertInto('lead_events').values({ lead_id: leadId, kind, at, detail, repeat_id: repeatId }).execute();
  }

  /** Newest first. */
  repeatsOf(leadId: number): Promise<LeadRepeat[]> {
    return this.db
      .selectFrom('lead_repeats')
      .selectAll()
      .where('lead_id', '=', leadId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** The card is in the group; the repeats shown in it are handled (they cause no ping). */
  async markPublished(p: {
    leadId: number;
    chatId: string;
    /** Null: General (or a chat without topics). */
    threadId?: number | null;
    messageId: number;
    format: 'html' | 'plain';
    repeatIds: number[];
    /** The lead's card_dirty_at when the card was rendered. */
    dirtyAt: number | null;
    now: number;
    /** The card is the late lead's fallback message, edited. */
    adopted?: boolean;
  }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // One update: the outbox's triggers see the card published and, when a newer change marked it, to rewrite.
      await trx
        .updateTable('leads')
        .set((eb) => ({
          published_at: p.now,
          chat_id: p.chatId,
          message_id: p.messageId,
          card_thread_id: p.threadId ?? null,
          card_format: p.format,
          last_error: null,
          ...(p.adopted ? { fallback_state: 'adopted' as const } : {}),
          ...(p.dirtyAt !== null
            ? { card_dirty_at: eb.case().when('card_dirty_at', '=', p.dirtyAt).then(null).else(eb.ref('card_dirty_at')).end() }
            : {}),
        }))
        .where('id', '=', p.leadId)
        .execute();
      if (p.repeatIds.length > 0) {
        await trx
          .updateTable('lead_repeats')
          .set({ notified_at: p.now, notify_outcome: 'in_card' })
          .where('id', 'in', p.repeatIds)
          .where('notified_at', 'is', null)
          .execute();
      }
    });
  }

  /** The card message is gone: the outbox's trigger queues a new card. */
  async republish(leadId: number, error: string): Promise<void> {
    await this.db.updateTable('leads').set({ published_at: null, message_id: null, last_error: error }).where('id', '=', leadId).execute();
  }

  async cardAt(chatId: string, messageId: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('leads')
      .select('id')
      .where('chat_id', '=', chatId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row?.id;
  }

  /** The lead whose card, or whose notice under the card (`noticeSent`), is this message of its chat. */
  async leadAt(chatId: string, messageId: number): Promise<number | undefined> {
    const notice = this.db
      .selectFrom('lead_notices')
      .select('lead_id as id')
      .where('chat_id', '=', chatId)
      .where('message_id', '=', messageId);
    return (await this.cardAt(chatId, messageId)) ?? (await notice.executeTakeFirst())?.id;
  }

  /** The bot's message `messageId` in `chatId` speaks of the lead: a member's reply to it is one to the card. */
  async noticeSent(leadId: number, chatId: string, messageId: number): Promise<void> {
    await this.db
      .insertInto('lead_notices')
      .values({ chat_id: chatId, message_id: messageId, lead_id: leadId })
      .onConflict((c) => c.doNothing())
      .execute();
  }

  /** The fallback message cannot be the card: it waits for its reply (`answer`), or is another lead's card (`refused`). */
  async fallbackNotAdopted(leadId: number, next: Extract<FallbackState, 'answer' | 'refused'> = 'answer'): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ fallback_state: next })
      .where('id', '=', leadId)
      .where('fallback_state', '=', 'pending')
      .execute();
  }

  async markFallbackAnswered(of: 'lead' | 'repeat', id: number, end: FallbackAnswerEnd): Promise<void> {
    await this.db
      .updateTable(of === 'lead' ? 'leads' : 'lead_repeats')
      .set({ fallback_state: end })
      .where('id', '=', id)
      .execute();
  }

  async findLead(id: number): Promise<Lead | undefined> {
    return this.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findRepeat(id: number): Promise<LeadRepeat | undefined> {
    return this.db.selectFrom('lead_repeats').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async markRepeatHandled(id: number, outcome: RepeatOutcome, now: number, error: string | null = null): Promise<void> {
    await this.db
      .updateTable('lead_repeats')
      .set({ notified_at: now, notify_outcome: outcome, ...(error !== null ? { last_error: error } : {}) })
      .where('id', '=', id)
      .execute();
  }

  /**
   * The card shows the change seen at `dirtyAt` (by the edit row `rowId`). A newer change keeps it dirty and gets an edit
   * row of its own unless a later one waits: the trigger added none while this row, unfinished, stood waiting.
   */
  async markCardRefreshed(leadId: number, dirtyAt: number, rowId: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const cleared = await trx
        .updateTable('leads')
        .set({ card_dirty_at: null })
        .where('id', '=', leadId)
        .where('card_dirty_at', '=', dirtyAt)
        .executeTakeFirst();
      if (Number(cleared.numUpdatedRows) > 0) return;
      const lead = await trx.selectFrom('leads').select('card_dirty_at').where('id', '=', leadId).executeTakeFirst();
      const later = await trx
        .selectFrom('outbox')
        .select('id')
        .where('lead_id', '=', leadId)
        .where('kind', '=', 'card_edit')
        .where('done_at', 'is', null)
        .where('id', '>', rowId)
        .executeTakeFirst();
      if (lead?.card_dirty_at == null || later) return;
      await trx
        .insertInto('outbox')
        .values({ kind: 'card_edit', lead_id: leadId, target: TELEGRAM_TARGET, created_at: lead.card_dirty_at, next_at: 0 })
        .execute();
    });
  }

  async moveChat(from: string, to: string): Promise<void> {
    await this.db.updateTable('leads').set({ chat_id: to }).where('chat_id', '=', from).execute();
  }

  /** Leads with no card yet, oldest first, with their card row's attempts, last error and next time (/stickers_new). */
  listUnpublished(limit: number) {
    return this.db
      .selectFrom('leads as l')
      .leftJoin('outbox as o', (join) => join.onRef('o.lead_id', '=', 'l.id').on('o.kind', '=', 'card').on('o.done_at', 'is', null))
      .select((eb) => [
        'l.id',
        'l.created_at',
        eb.fn.coalesce('o.attempts', eb.lit(0)).as('publish_attempts'),
        'o.last_error',
        eb.fn.coalesce('o.next_at', 'l.created_at').as('next_attempt_at'),
      ])
      .where('l.published_at', 'is', null)
      .orderBy('l.created_at')
      .orderBy('l.id')
      .limit(limit)
      .execute();
  }

  /** When the oldest lead without a card reached the server (a late lead waits only since it arrived); null: none. */
  async oldestUnpublishedAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.min<number>(eb.fn.coalesce('received_at', 'created_at')).as('oldest'))
      .where('published_at', 'is', null)
      .executeTakeFirst();
    return row?.oldest ?? null;
  }

  /** When the newest card went out (null: none yet), from the index of the published leads. */
  async lastPublishedAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.max<number>('published_at').as('last'))
      .where('published_at', 'is not', null)
      .executeTakeFirst();
    return row?.last ?? null;
  }

  countUnpublished(): Promise<number> {
    return countRows(this.db.selectFrom('leads').where('published_at', 'is', null));
  }

  /** Status compare-and-set: only if still `from` and not anonymised, committed with its history row; false: someone was first. */
  changeStatus(c: StatusChange): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('leads')
        .set({ status: c.to, status_changed_by: c.userName, status_changed_at: c.at, card_dirty_at: dirtyAfter(c.at) })
        .where('id', '=', c.leadId)
        .where('status', '=', c.from)
        .where('anonymised_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('lead_status_changes')
        .values({ lead_id: c.leadId, from_status: c.from, to_status: c.to, user_id: c.userId, user_name: c.userName, at: c.at })
        .execute();
      return true;
    });
  }

  /**
   * Published cards still `new`, never reminded, that reached the server before `cutoff` (a late lead: its arrival). The
   * status is a literal, as in the partial index `leads_reminder_due` that reads them.
   */
  dueReminders(cutoff: number, limit: number) {
    return this.db
      .selectFrom('leads')
      .select(['id', 'chat_id', 'message_id', 'card_thread_id', 'created_at'])
      .where('status', '=', sql.lit('new'))
      .where('published_at', 'is not', null)
      .where('reminded_at', 'is', null)
      .where('anonymised_at', 'is', null)
      .where((eb) => eb(eb.fn.coalesce('received_at', 'created_at'), '<=', cutoff))
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Takes the one reminder of a lead; of two runs at once, one gets it. */
  async claimReminder(leadId: number, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('leads')
      .set({ reminded_at: now })
      .where('id', '=', leadId)
      .where('reminded_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async releaseReminder(leadId: number): Promise<void> {
    await this.db.updateTable('leads').set({ reminded_at: null }).where('id', '=', leadId).execute();
  }
}
