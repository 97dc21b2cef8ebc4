import { Injectable } from '@nestjs/common';
import { type ExpressionBuilder, sql, type SqlBool } from 'kysely';
import { LEAD_FIELDS } from '@stickers/shared';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { containsAnyCase, equalsAnyCase, likeContains } from '../database/dialect-sql';
import type { Database } from '../database/schema';
import type { Lead, LeadRepeat } from '../domain/lead';
import type { LeadStatus } from '../domain/lead-status';
import { SOURCE_COLUMNS } from '../domain/personal-fields';

/** A page of the export: filters on the creation time and the status, and the id paging goes below. */
export interface ExportQuery {
  since: number | null;
  until: number | null;
  status: LeadStatus | null;
  /** The cursor: only leads with a smaller id. */
  beforeId: number | null;
  limit: number;
  /** The landing's source (`null`: leads without one), undefined for any. */
  source?: string | null;
  search?: LeadSearch;
  /** The inbox viewer's leads; undefined: every lead. */
  scope?: LeadScope;
  id?: number;
  /** Only the leads changed at or after `since`, oldest change first, after the page before's last (not with `beforeId`). */
  changed?: { since: number; after: { updatedAt: number; id: number } | null };
}

/** The leads an inbox viewer may see (docs/api.md, "Whose leads"): cards in `chats`, or routed there by their source. */
export interface LeadScope {
  chats: readonly string[];
  /** Leads without a card yet whose source (lower-cased) is one of these go to one of `chats`. */
  routedSources: readonly string[];
  /** Leads without a card yet whose source no route names (or that have none) go to one of `chats`: null if not. */
  unrouted: { routed: readonly string[] } | null;
}

export type ScopedLeads = ExpressionBuilder<Database & { l: Database['leads'] }, 'l'>;

export function inLeadScope(db: LeadsDb, scope: LeadScope) {
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

/** The inbox's search: a lead matching any part given (number; part of name, username, phone digits, source; any case). */
export interface LeadSearch {
  number: number | null;
  name: string | null;
  username: string | null;
  phoneDigits: string | null;
  source: string | null;
}

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
  'updated_at',
  ...SOURCE_COLUMNS,
  'captcha',
  'consent_accepted_at',
  'consent_policy_url',
] as const satisfies readonly (keyof Lead)[];

export type ExportRow = Pick<Lead, (typeof EXPORT_COLUMNS)[number]> & { repeats: number };

export type ExportRepeatRow = Pick<LeadRepeat, 'lead_id' | 'request_id' | 'created_at' | 'received_at' | 'changes'>;

/** Read-only pages of leads (`GET /leads`, the CSV, the inbox, the webhooks) and a lead's whole story (the trace, the CLI's too). */
@Injectable()
export class LeadPagesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** One page of leads with their counts of repeats, newest id first (with `changed`: by `updated_at`, then id). */
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
    const { changed, search } = q;
    if (changed) {
      const after = changed.after;
      query = query.where('l.updated_at', '>=', Math.max(changed.since, after?.updatedAt ?? 0));
      if (after) query = query.where((eb) => eb.or([eb('l.updated_at', '>', after.updatedAt), eb('l.id', '>', after.id)]));
    }
    if (q.source !== undefined) query = query.where('l.source_landing', q.source === null ? 'is' : '=', q.source);
    if (q.id !== undefined) query = query.where('l.id', '=', q.id);
    if (q.scope !== undefined) query = query.where(inLeadScope(this.db, q.scope));
    if (search) {
      query = query.where((eb) =>
        eb.or([
          ...(search.number !== null ? [eb('l.id', '=', search.number)] : []),
          ...(search.name !== null ? [containsAnyCase(this.db, 'l.name', search.name)] : []),
          ...(search.username !== null ? [eb('l.telegram_key', 'like', sql<string>`${likeContains(search.username)} escape '\\'`)] : []),
          ...(search.phoneDigits !== null ? [eb('l.phone', 'like', `%${search.phoneDigits}%`)] : []),
          ...(search.source !== null ? [containsAnyCase(this.db, 'l.source_landing', search.source)] : []),
        ]),
      );
    }
    query = changed ? query.orderBy('l.updated_at').orderBy('l.id') : query.orderBy('l.id', 'desc');
    return query.limit(q.limit).execute() as Promise<ExportRow[]>;
  }

  /** Oldest first within each lead. */
  repeatsOf(leadIds: readonly number[]): Promise<ExportRepeatRow[]> {
    if (leadIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('lead_repeats')
      .select(['lead_id', 'request_id', 'created_at', 'received_at', 'changes'])
      .where('lead_id', 'in', [...leadIds])
      .orderBy('lead_id')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The lead of a request_id: the lead's own, or the lead a repeat of that id repeats. */
  async leadOfRequest(requestId: string): Promise<{ leadId: number; repeat: boolean } | undefined> {
    const lead = await this.db.selectFrom('leads').select('id').where('request_id', '=', requestId).executeTakeFirst();
    if (lead) return { leadId: lead.id, repeat: false };
    const repeat = await this.db.selectFrom('lead_repeats').select('lead_id').where('request_id', '=', requestId).executeTakeFirst();
    return repeat && { leadId: repeat.lead_id, repeat: true };
  }

  lead(id: number) {
    return this.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Oldest first, as they came. */
  repeats(leadId: number) {
    return this.db.selectFrom('lead_repeats').selectAll().where('lead_id', '=', leadId).orderBy('created_at').orderBy('id').execute();
  }

  statusChanges(leadId: number) {
    return this.db.selectFrom('lead_status_changes').selectAll().where('lead_id', '=', leadId).orderBy('at').orderBy('id').execute();
  }

  events(leadId: number) {
    return this.db.selectFrom('lead_events').selectAll().where('lead_id', '=', leadId).orderBy('id').execute();
  }

  /** The lead's conversation, without its text or authors (personal). */
  messages(leadId: number) {
    return this.db
      .selectFrom('lead_messages')
      .select(['at', 'direction', 'media', 'state', 'error'])
      .where('lead_id', '=', leadId)
      .orderBy('id')
      .execute();
  }

  /** The lead's outbox rows but webhooks', oldest first. */
  outbox(leadId: number) {
    return this.db
      .selectFrom('outbox')
      .select(['kind', 'repeat_id', 'attempts', 'next_at', 'done_at', 'last_error'])
      .where('lead_id', '=', leadId)
      .where('kind', '!=', 'webhook')
      .orderBy('id')
      .execute();
  }
}
