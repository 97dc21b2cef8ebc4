import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Lead, LeadRepeat, RepeatOutcome } from '../database/schema';

export interface UnpublishedLead {
  id: number;
  created_at: number;
  publish_attempts: number;
  last_error: string | null;
  next_attempt_at: number;
}

/** Every query of the outbox: due leads and repeats, and what happened to each attempt. */
@Injectable()
export class OutboxRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Leads without a card whose retry time has come, oldest lead first (cards appear in the order leads came). */
  dueLeads(now: number, limit: number): Promise<Lead[]> {
    return this.db
      .selectFrom('leads')
      .selectAll()
      .where('published_at', 'is', null)
      .where('next_attempt_at', '<=', now)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Every repeat of a lead, newest first. */
  repeatsOf(leadId: number): Promise<LeadRepeat[]> {
    return this.db
      .selectFrom('lead_repeats')
      .selectAll()
      .where('lead_id', '=', leadId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /**
   * The card is in the group. Repeats that were in it are handled ("a repeat that arrives before the card is
   * published is included in the first version of the card and causes no ping").
   */
  async markPublished(p: {
    leadId: number;
    chatId: string;
    messageId: number;
    format: 'html' | 'plain';
    repeatIds: number[];
    /** The lead's card_dirty_at when the card was rendered: the new card shows that change. */
    dirtyAt: number | null;
    now: number;
  }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('leads')
        .set({ published_at: p.now, chat_id: p.chatId, message_id: p.messageId, card_format: p.format, last_error: null })
        .where('id', '=', p.leadId)
        .execute();
      if (p.dirtyAt !== null) {
        await trx
          .updateTable('leads')
          .set({ card_dirty_at: null })
          .where('id', '=', p.leadId)
          .where('card_dirty_at', '=', p.dirtyAt)
          .execute();
      }
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

  async markPublishFailed(leadId: number, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ publish_attempts: attempts, next_attempt_at: nextAttemptAt, last_error: error })
      .where('id', '=', leadId)
      .execute();
  }

  /** Flood control: not the lead's failure, only a later time. */
  async deferLead(leadId: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.db.updateTable('leads').set({ next_attempt_at: nextAttemptAt, last_error: error }).where('id', '=', leadId).execute();
  }

  /** The card message is gone: publish a new card (with every repeat in it) at the next tick. */
  async republish(leadId: number, now: number, error: string): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ published_at: null, message_id: null, next_attempt_at: now, last_error: error })
      .where('id', '=', leadId)
      .execute();
  }

  /** Repeats waiting for a notification whose lead has a card (or will never need one: spam, anonymised). */
  dueRepeats(now: number, limit: number) {
    return this.db
      .selectFrom('lead_repeats as r')
      .innerJoin('leads as l', 'l.id', 'r.lead_id')
      .select(['r.id', 'r.lead_id', 'r.notify_attempts', 'l.status', 'l.anonymised_at', 'l.published_at'])
      .where('r.notified_at', 'is', null)
      .where('r.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('l.published_at', 'is not', null), eb('l.status', '=', 'spam'), eb('l.anonymised_at', 'is not', null)]))
      .orderBy('r.next_attempt_at')
      .orderBy('r.id')
      .limit(limit)
      .execute();
  }

  async findLead(id: number): Promise<Lead | undefined> {
    return this.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async markRepeatHandled(id: number, outcome: RepeatOutcome, now: number, error: string | null = null): Promise<void> {
    await this.db
      .updateTable('lead_repeats')
      .set({ notified_at: now, notify_outcome: outcome, ...(error !== null ? { last_error: error } : {}) })
      .where('id', '=', id)
      .execute();
  }

  async markRepeatFailed(id: number, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.db
      .updateTable('lead_repeats')
      .set({ notify_attempts: attempts, next_attempt_at: nextAttemptAt, last_error: error })
      .where('id', '=', id)
      .execute();
  }

  /** Published cards that must be rewritten (a status change, an anonymisation) and whose retry time has come. */
  dirtyCards(now: number, limit: number): Promise<{ id: number }[]> {
    return this.db
      .selectFrom('leads')
      .select('id')
      .where('card_dirty_at', 'is not', null)
      .where('published_at', 'is not', null)
      .where('card_refresh_next_at', '<=', now)
      .orderBy('card_refresh_next_at')
      .limit(limit)
      .execute();
  }

  /** The card shows the change seen at `dirtyAt`; a newer change keeps it dirty. */
  async markCardRefreshed(leadId: number, dirtyAt: number): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ card_dirty_at: null, card_refresh_attempts: 0, card_refresh_next_at: null })
      .where('id', '=', leadId)
      .where('card_dirty_at', '=', dirtyAt)
      .execute();
  }

  async markCardRefreshFailed(leadId: number, attempts: number, nextAt: number, error: string): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ card_refresh_attempts: attempts, card_refresh_next_at: nextAt, last_error: error })
      .where('id', '=', leadId)
      .execute();
  }

  /** After a group migration the cards live in the new chat. */
  async moveChat(from: string, to: string): Promise<void> {
    await this.db.updateTable('leads').set({ chat_id: to }).where('chat_id', '=', from).execute();
  }

  /** Leads with no card yet, oldest first, with their last error and next attempt (feeds /stickers_new). */
  listUnpublished(limit: number): Promise<UnpublishedLead[]> {
    return this.db
      .selectFrom('leads')
      .select(['id', 'created_at', 'publish_attempts', 'last_error', 'next_attempt_at'])
      .where('published_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** When the oldest lead without a card was stored, or null when every lead has one. */
  async oldestUnpublishedAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.min<number>('created_at').as('oldest'))
      .where('published_at', 'is', null)
      .executeTakeFirst();
    return row?.oldest ?? null;
  }

  /** When the newest card went out (null: none yet). Read once at start; the outbox keeps it up to date after that. */
  async lastPublishedAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.max<number>('published_at').as('last'))
      .executeTakeFirst();
    return row?.last ?? null;
  }

  async countUnpublished(): Promise<number> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('published_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
