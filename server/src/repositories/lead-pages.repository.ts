import { Injectable } from '@nestjs/common';
import { type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';
import { LEAD_FIELDS } from '@stickers/shared';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { containsAnyCase, equalsAnyCase } from '../database/dialect-sql';
import type { Database } from '../database/schema';
import type { Lead, LeadRepeat } from '../domain/lead';
import type { LeadStatus } from '../domain/lead-status';
import { SOURCE_COLUMNS } from '../domain/personal-fields';

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
  /**
   * Only the leads whose state changed at or after `since` (`updated_at`), oldest change first (then by number), after
   * the position `after` (the last lead of the page before; null for the first page). `beforeId` is not used with it.
   */
  changed?: { since: number; after: { updatedAt: number; id: number } | null };
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
  'updated_at',
  ...SOURCE_COLUMNS,
  'captcha',
  'consent_accepted_at',
  'consent_policy_url',
] as const satisfies readonly (keyof Lead)[];

/** A lead as the export reads it: its columns and how many repeats it has. */
export type ExportRow = Pick<Lead, (typeof EXPORT_COLUMNS)[number]> & { repeats: number };

/** A repeat as the export reads it: whose, its request, its times and its changed fields (JSON). */
export type ExportRepeatRow = Pick<LeadRepeat, 'lead_id' | 'request_id' | 'created_at' | 'received_at' | 'changes'>;

/** Pages of leads as `GET /leads`, the CSV, the inbox's list and the webhooks read them: filters, search, scope. */
@Injectable()
export class LeadPagesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Export: one page of leads, newest first by arrival (the id: a lead stored later always has a greater
   * one, so paging "older than the cursor" neither repeats nor skips while leads keep coming), filtered by the
   * creation time (since inclusive, until exclusive) and the status, each with its count of repeats. With `changed`:
   * the leads changed since then, in the order of `updated_at` and the number (the index `leads_updated` reads them
   * in that order from the first change at or after the later of `since` and the position).
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
    const changed = q.changed;
    if (changed) {
      const after = changed.after;
      query = query.where('l.updated_at', '>=', Math.max(changed.since, after?.updatedAt ?? 0));
      if (after) query = query.where((eb) => eb.or([eb('l.updated_at', '>', after.updatedAt), eb('l.id', '>', after.id)]));
    }
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
    query = changed ? query.orderBy('l.updated_at').orderBy('l.id') : query.orderBy('l.id', 'desc');
    return query.limit(q.limit).execute() as Promise<ExportRow[]>;
  }

  /** The repeats of these leads (a page's), oldest first within each lead. */
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
}
