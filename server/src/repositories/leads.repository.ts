import { Injectable } from '@nestjs/common';
import { type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';
import { LEAD_FIELDS } from '@stickers/shared';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { containsAnyCase, equalsAnyCase } from '../database/dialect-sql';
import type { Database } from '../database/schema';
import { parseRepeatChanges, type FallbackState, type Lead, type LeadRepeat, type RepeatOutcome } from '../domain/lead';
import type { LeadStatus } from '../domain/lead-status';
import { erasedChanges, erasedLeadColumns, erasedRepeatColumns, SOURCE_COLUMNS } from '../domain/personal-fields';
import type { Tx } from './transactor';

export interface UnpublishedLead {
  id: number;
  created_at: number;
  publish_attempts: number;
  last_error: string | null;
  next_attempt_at: number;
}

/** A press decided by the lead-status service: the status goes from `from` to `to` if nobody was first. */
export interface StatusChange {
  leadId: number;
  from: LeadStatus;
  to: LeadStatus;
  userId: number;
  userName: string;
  at: number;
}

export type AnonymiseResult = 'done' | 'already' | 'unknown';

/** A page of the export: filters on the creation time and the status, and the id paging goes below. */
export interface ExportQuery {
  since: number | null;
  until: number | null;
  status: LeadStatus | null;
  /** Only leads with a smaller id (the cursor); null for the first page. */
  beforeId: number | null;
  limit: number;
  /** The inbox's: the landing's source (`null` here: leads without one), undefined for any. */
  source?: string | null;
  /** The inbox's search; undefined for none. */
  search?: LeadSearch;
  /** The inbox viewer's leads; undefined: every lead. */
  scope?: LeadScope;
  /** Only the lead of this number (a lead's page); undefined: any. */
  id?: number;
}

/**
 * The leads an inbox viewer may see (docs/api.md, "whose leads"): those whose card went to one of `chats`, and those
 * without a card yet that their source's route (LEADS_ROUTES) sends to one of them. The repository applies it; the
 * inbox's access service decides it from the viewer's memberships and the routes.
 */
export interface LeadScope {
  /** The leads chats the viewer is a member of (ids as they are now). */
  chats: readonly string[];
  /** Leads without a card yet whose source (lower-cased) is one of these go to one of `chats`. */
  routedSources: readonly string[];
  /** Leads without a card yet whose source no route names (or that have none) go to one of `chats`: null if not. */
  unrouted: { routed: readonly string[] } | null;
}

type ScopedLeads = ExpressionBuilder<Database & { l: Database['leads'] }, 'l'>;

/** The condition of a LeadScope on `leads as l` (docs/api.md, "whose leads"). */
export function inLeadScope(db: Kysely<unknown>, scope: LeadScope) {
  return (eb: ScopedLeads) => {
    const unpublished = [
      ...(scope.routedSources.length > 0 ? [equalsAnyCase(db, 'l.source_landing', scope.routedSources)] : []),
      ...(scope.unrouted
        ? [eb.or([eb('l.source_landing', 'is', null), eb.not(equalsAnyCase(db, 'l.source_landing', scope.unrouted.routed))])]
        : []),
    ];
    return eb.or([
      ...(scope.chats.length > 0 ? [eb('l.chat_id', 'in', [...scope.chats])] : []),
      ...(unpublished.length > 0 ? [eb.and([eb('l.chat_id', 'is', null), eb.or(unpublished)])] : []),
      sql<SqlBool>`1 = 0`,
    ]);
  };
}

/**
 * The inbox's search: a lead matching any of the parts given — its number, a part of its name (any case), a part of
 * its username (stored lower-cased) or of its phone's digits, a part of its landing's source name (any case).
 */
export interface LeadSearch {
  number: number | null;
  name: string | null;
  username: string | null;
  phoneDigits: string | null;
  source: string | null;
}

/** `%part%` for LIKE with `\` as the escape character: the part's own `%`, `_` and `\` match themselves. */
const contains = (part: string) => `%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The columns of a lead the export reads (besides how many repeats it has): the form's fields, where it came from and
 * what came of the landing's captcha among them.
 */
const EXPORT_COLUMNS = [
  'id',
  'request_id',
  ...LEAD_FIELDS,
  'status',
  'status_changed_by',
  'status_changed_at',
  'created_at',
  'received_at',
  'published_at',
  'anonymised_at',
  ...SOURCE_COLUMNS,
  'captcha',
  'consent_accepted_at',
  'consent_policy_url',
] as const satisfies readonly (keyof Lead)[];

/** A lead as the export reads it: its columns and how many repeats it has. */
export type ExportRow = Pick<Lead, (typeof EXPORT_COLUMNS)[number]> & { repeats: number };

/** A fallback message waiting for its reply: a late lead's whose card went out anew, or a late repeat's. */
export interface FallbackToAnswer {
  /** `lead`: the row is the lead's; `repeat`: a repeat's (the reply names the lead it repeats). */
  of: 'lead' | 'repeat';
  /** The lead's id, or the repeat's. */
  id: number;
  leadId: number;
  requestId: string;
  chatId: string;
  messageId: number;
  attempts: number;
  /** Its lead's card is in the group (the reply names its number). */
  published: boolean;
}

/** What became of a fallback message's reply: sent, or given up for good. */
export type FallbackAnswerEnd = Extract<FallbackState, 'answered' | 'gone' | 'refused' | 'gave_up'>;

/**
 * Every query on `leads` and `lead_repeats`: the outbox's (due leads and repeats, what happened to each attempt), the
 * status compare-and-set, reminders, anonymisation, and the backlog figures of reports, readiness and metrics. Three
 * kinds live elsewhere on purpose: the submit decision (SubmitRunner: SQLite's prepared statements on the hot path, PostgreSQL's function),
 * the reports' aggregations (ReportsRepository) and the trace's reads (TraceRepository).
 */
@Injectable()
export class LeadsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

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
    /** The forum topic the card went into; null: the chat's General topic (or a chat without topics). */
    threadId?: number | null;
    messageId: number;
    format: 'html' | 'plain';
    repeatIds: number[];
    /** The lead's card_dirty_at when the card was rendered: the new card shows that change. */
    dirtyAt: number | null;
    now: number;
    /** The card is the late lead's fallback message, edited. */
    adopted?: boolean;
  }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // One update: the outbox's triggers see the card published and, when a newer change marked it, rewritten.
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

  /** The card message is gone: a new card (with every repeat in it); the outbox's trigger queues it. */
  async republish(leadId: number, error: string): Promise<void> {
    await this.db.updateTable('leads').set({ published_at: null, message_id: null, last_error: error }).where('id', '=', leadId).execute();
  }

  /** The lead whose card is that message, if any. */
  async cardAt(chatId: string, messageId: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('leads')
      .select('id')
      .where('chat_id', '=', chatId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row?.id;
  }

  /**
   * The fallback message cannot be the card: the card goes out anew and the message waits for its reply (`answer`),
   * or, when it is no fallback message at all (another lead's card), it is left alone (`refused`).
   */
  async fallbackNotAdopted(leadId: number, next: Extract<FallbackState, 'answer' | 'refused'> = 'answer'): Promise<void> {
    await this.db
      .updateTable('leads')
      .set({ fallback_state: next })
      .where('id', '=', leadId)
      .where('fallback_state', '=', 'pending')
      .execute();
  }

  /** The fallback message of a lead (`repeatId` null) or of a repeat, if it waits for its reply. */
  async fallbackToAnswer(leadId: number, repeatId: number | null, attempts: number): Promise<FallbackToAnswer | undefined> {
    const lead = await this.db
      .selectFrom('leads')
      .select(['id', 'request_id', 'fallback_state', 'fallback_chat_id', 'fallback_message_id', 'published_at'])
      .where('id', '=', leadId)
      .executeTakeFirst();
    if (!lead) return undefined;
    const own =
      repeatId === null
        ? lead
        : await this.db
            .selectFrom('lead_repeats')
            .select(['id', 'request_id', 'fallback_state', 'fallback_chat_id', 'fallback_message_id'])
            .where('id', '=', repeatId)
            .executeTakeFirst();
    if (!own || own.fallback_state !== 'answer') return undefined;
    return {
      of: repeatId === null ? 'lead' : 'repeat',
      id: own.id,
      leadId,
      requestId: own.request_id,
      chatId: own.fallback_chat_id!,
      messageId: own.fallback_message_id!,
      attempts,
      published: lead.published_at !== null,
    };
  }

  async markFallbackAnswered(of: FallbackToAnswer['of'], id: number, end: FallbackAnswerEnd): Promise<void> {
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

  /** The card shows the change seen at `dirtyAt`; a newer change keeps it dirty. */
  async markCardRefreshed(leadId: number, dirtyAt: number): Promise<void> {
    await this.db.updateTable('leads').set({ card_dirty_at: null }).where('id', '=', leadId).where('card_dirty_at', '=', dirtyAt).execute();
  }

  /** After a group migration the cards live in the new chat. */
  async moveChat(from: string, to: string): Promise<void> {
    await this.db.updateTable('leads').set({ chat_id: to }).where('chat_id', '=', from).execute();
  }

  /** Leads with no card yet, oldest first, with their card row's attempts, last error and next time (/stickers_new). */
  async listUnpublished(limit: number): Promise<UnpublishedLead[]> {
    const rows = await this.db
      .selectFrom('leads as l')
      .leftJoin('outbox as o', (join) => join.onRef('o.lead_id', '=', 'l.id').on('o.kind', '=', 'card').on('o.done_at', 'is', null))
      .select(['l.id', 'l.created_at', 'o.attempts', 'o.last_error', 'o.next_at'])
      .where('l.published_at', 'is', null)
      .orderBy('l.created_at')
      .orderBy('l.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      created_at: r.created_at,
      publish_attempts: r.attempts ?? 0,
      last_error: r.last_error ?? null,
      next_attempt_at: r.next_at ?? r.created_at,
    }));
  }

  /**
   * When the oldest lead without a card reached the server, or null when every lead has one. Its arrival, not its
   * creation: a late lead replayed from the landing's spool has waited for its card only since it arrived.
   */
  async oldestUnpublishedAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('leads')
      .select((eb) => eb.fn.min<number>(eb.fn.coalesce('received_at', 'created_at')).as('oldest'))
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

  /**
   * Status compare-and-set: the status changes only if it is still `from` and the lead is not anonymised, and the
   * card is marked for rewriting. False when someone was first. Takes the transaction that records the change in
   * `lead_status_changes`, so that a status never changes without its history row (and no row claims a change).
   */
  async changeStatus(c: StatusChange, trx: Tx): Promise<boolean> {
    const result = await trx
      .updateTable('leads')
      .set({
        status: c.to,
        status_changed_by: c.userName,
        status_changed_at: c.at,
        card_dirty_at: c.at,
      })
      .where('id', '=', c.leadId)
      .where('status', '=', c.from)
      .where('anonymised_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Published cards still `new`, that reached the server before `cutoff` (a late lead's card gets its reminder as long
   * after its arrival as any other: the group has seen it only since then), never reminded.
   */
  dueReminders(cutoff: number, limit: number) {
    return this.db
      .selectFrom('leads')
      .select(['id', 'chat_id', 'message_id', 'card_thread_id', 'created_at'])
      .where('status', '=', 'new')
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

  /**
   * Erases a lead's personal columns (every one `domain/personal-fields.ts` lists: the form's six fields, the
   * username key, ip_hash, the UTM values and the referrer) and those of its repeats (the values of their changed
   * fields too; the names stay), keeps
   * the lead for statistics, and marks the card for rewriting. Pending repeat notifications become handled: there is
   * nothing left to show. Without `trx` it is a transaction of its own; the anonymisation service passes the one that
   * also writes the lead's `anonymised` event, so the trace shows an erase exactly when it committed.
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
   * The contacts of a lead not yet anonymised, as stored: its username and phone and those its repeats changed to
   * (each once). Read in the erasing transaction, before the erase, so that the erasure can be recorded (hashed) for
   * late replays. Nothing for an unknown or anonymised lead.
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
   * Export: one page of leads, newest first by arrival (the id: a lead stored later always has a greater
   * one, so paging "older than the cursor" neither repeats nor skips while leads keep coming), filtered by the
   * creation time (since inclusive, until exclusive) and the status, each with its count of repeats.
   */
  exportPage(q: ExportQuery): Promise<ExportRow[]> {
    let query = this.db
      .selectFrom('leads as l')
      .select(EXPORT_COLUMNS.map((c) => `l.${c}` as const))
      .select((eb) =>
        eb
          .selectFrom('lead_repeats as r')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('r.lead_id', '=', 'l.id')
          .as('repeats'),
      );
    if (q.since !== null) query = query.where('l.created_at', '>=', q.since);
    if (q.until !== null) query = query.where('l.created_at', '<', q.until);
    if (q.status !== null) query = query.where('l.status', '=', q.status);
    if (q.beforeId !== null) query = query.where('l.id', '<', q.beforeId);
    if (q.source !== undefined) query = query.where('l.source_landing', q.source === null ? 'is' : '=', q.source);
    if (q.id !== undefined) query = query.where('l.id', '=', q.id);
    if (q.scope !== undefined) query = query.where(inLeadScope(this.db as unknown as Kysely<unknown>, q.scope));
    const search = q.search;
    if (search) {
      query = query.where((eb) =>
        eb.or([
          ...(search.number !== null ? [eb('l.id', '=', search.number)] : []),
          ...(search.name !== null ? [containsAnyCase(this.db as unknown as Kysely<unknown>, 'l.name', search.name)] : []),
          ...(search.username !== null ? [eb('l.telegram_key', 'like', sql<string>`${contains(search.username)} escape '\\'`)] : []),
          ...(search.phoneDigits !== null ? [eb('l.phone', 'like', `%${search.phoneDigits}%`)] : []),
          ...(search.source !== null ? [containsAnyCase(this.db as unknown as Kysely<unknown>, 'l.source_landing', search.source)] : []),
        ]),
      );
    }
    return query.orderBy('l.id', 'desc').limit(q.limit).execute() as Promise<ExportRow[]>;
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
