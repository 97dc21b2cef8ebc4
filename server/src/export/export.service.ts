import { setImmediate as nextTurnOfTheLoop } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { LEAD_FIELDS, normalisePhone, SOURCE_KEYS, UTM_KEYS, type PhoneRegion, type SourceKey } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { DAY_MS, WALL_CLOCK_FIELDS } from '../clock/local-time';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isPersonalField, SOURCE_COLUMN, withoutPersonal } from '../domain/personal-fields';
import { parseRepeatChanges, type FormColumns } from '../domain/lead';
import type { TelegramAccount } from '../domain/telegram-account';
import { TelegramLinksRepository } from '../conversations/telegram-links.repository';
import {
  LeadPagesRepository,
  type ExportQuery,
  type ExportRepeatRow,
  type ExportRow,
  type LeadScope,
  type LeadSearch,
} from '../repositories/lead-pages.repository';
import { CSV_BOM, csvRow } from './csv.writer';
import type { ExportedLead, ExportedLeadRepeatDto, LeadsPageDto } from './export.dto';
import {
  cursorKey,
  encodeCursor,
  EXPORT_LIMIT_DEFAULT,
  readCursor,
  sourceFilter,
  type CursorPosition,
  type InboxPageQuery,
  type LeadsPageQuery,
} from './export-query';
import { Turns } from './export-turns';

const CSV_PAGE = 200;
export const EXPORTS_AT_ONCE = 2;

/** A checked query's filters; `updatedSince`, the inbox's `source` (null: none), `search` and `scope` when given. */
type ExportFilter = Pick<ExportQuery, 'since' | 'until' | 'status' | 'source' | 'search' | 'scope'> & { updatedSince?: number };

export type LeadsQuery = LeadsPageQuery & InboxPageQuery;

/** How the inbox reads: no personal value shown nor searched (LEADS_CARD_PII=0); only the leads its viewer may see. */
interface ExportOptions {
  hidePersonal?: boolean;
  scope?: LeadScope | null;
}

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The row as it may be shown: without any personal column when hidden or anonymised. */
const shown = (r: ExportRow, hidePersonal = false): ExportRow => (hidePersonal || r.anonymised_at !== null ? withoutPersonal(r) : r);

/** A repeat's stored `changes` (JSON) as shown: the fields' names kept, a personal value null when `hidePersonal`. */
function repeatChanges(json: string, hidePersonal: boolean): ExportedLeadRepeatDto['changes'] {
  const sent = parseRepeatChanges(json);
  const shownValue = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);
  return Object.fromEntries(
    LEAD_FIELDS.filter((f) => f in sent).map((f) => [f, hidePersonal && isPersonalField(f) ? null : shownValue(sent[f])]),
  );
}

/** The lead as `GET /leads` and the inbox show it (export.dto.ts), with its repeats (oldest first); times ISO 8601. */
function toJson(row: ExportRow, hidePersonal: boolean, repeats: readonly ExportRepeatRow[], account: TelegramAccount | null): ExportedLead {
  const r = shown(row, hidePersonal);
  const hideRepeats = hidePersonal || row.anonymised_at !== null;
  const source = Object.fromEntries(SOURCE_KEYS.map((k) => [k, r[SOURCE_COLUMN[k]]])) as Record<SourceKey, string | null>;
  return {
    lead_number: r.id,
    request_id: r.request_id,
    status: r.status,
    status_changed_by: r.status_changed_by,
    status_changed_at: iso(r.status_changed_at),
    created_at: iso(r.created_at)!,
    received_at: iso(r.received_at ?? r.created_at)!,
    published_at: iso(r.published_at),
    anonymised_at: iso(r.anonymised_at),
    updated_at: iso(r.updated_at)!,
    ...(Object.fromEntries(LEAD_FIELDS.map((f) => [f, r[f]])) as FormColumns),
    source: Object.values(source).some((v) => v !== null) ? source : null,
    consent:
      r.consent_accepted_at === null || r.consent_policy_url === null
        ? null
        : { accepted_at: iso(r.consent_accepted_at)!, policy_url: r.consent_policy_url },
    repeats: Number(r.repeats),
    repeat_history: repeats.map((repeat) => ({
      request_id: repeat.request_id,
      created_at: iso(repeat.created_at)!,
      received_at: iso(repeat.received_at ?? repeat.created_at)!,
      changes: repeatChanges(repeat.changes, hideRepeats),
    })),
    captcha: r.captcha,
    telegram_account: hideRepeats ? null : account,
  };
}

/**
 * The inbox's `q`: `#42`/`№42` a lead number; digits a number or a part of a phone; else a part of a name, username or
 * phone. A whole phone number as the form takes it (`8 916 555-12-34` in LEADS_PHONE_REGION) is searched as stored.
 */
function parseSearch(raw: string, personal: boolean, region: PhoneRegion): LeadSearch | null {
  const q = raw.trim();
  if (q === '') return null;
  // Without `personal` only a number or a source: a hidden value could otherwise be rebuilt a character at a time.
  const none: LeadSearch = { number: null, name: null, username: null, phoneDigits: null, source: null };
  const numbered = /^[#№]\s*(\d{1,15})$/.exec(q);
  if (numbered) return { ...none, number: Number(numbered[1]) };
  const phone = personal ? normalisePhone(q, region)?.slice(1) : undefined;
  if (/^\d{1,15}$/.test(q)) return { ...none, number: Number(q), phoneDigits: personal ? (phone ?? q) : null };
  const lower = q.toLowerCase();
  if (!personal) return { ...none, source: lower };
  const digits = q.replace(/\D/g, '');
  const phoneLike = /^[+\d\s().-]+$/.test(q) && digits.length >= 3;
  return {
    ...none,
    name: phoneLike ? null : lower,
    username: phoneLike ? null : lower.replace(/^@/, ''),
    phoneDigits: phoneLike ? (phone ?? digits) : null,
  };
}

/** A column of the CSV and its cell of a shown row (`local`: a time in LEADS_TIMEZONE). */
type CsvColumn = [string, (r: ExportRow, local: (ms: number) => string) => string | number | null];
const CSV: CsvColumn[] = [
  ['number', (r) => r.id],
  ['created_at', (r) => iso(r.created_at)],
  ['created_local', (r, local) => local(r.created_at)],
  ['received_at', (r) => iso(r.received_at ?? r.created_at)],
  ['received_local', (r, local) => local(r.received_at ?? r.created_at)],
  ['status', (r) => r.status],
  ['status_changed_by', (r) => r.status_changed_by],
  ...LEAD_FIELDS.map((f): CsvColumn => [f, (r) => r[f]]),
  ['source', (r) => r.source_landing],
  ...UTM_KEYS.map((k): CsvColumn => [k, (r) => r[k]]),
  ['referrer', (r) => r.source_referrer],
  ['consent_accepted_at', (r) => iso(r.consent_accepted_at)],
  ['consent_policy_url', (r) => r.consent_policy_url],
  ['repeats', (r) => Number(r.repeats)],
  ['captcha', (r) => r.captcha],
];
export const CSV_COLUMNS = CSV.map(([column]) => column);

/** The read of the page after `after` (null: the first): below its number, or after its change (`updated_since`). */
function pageAfter(filter: ExportFilter, after: CursorPosition | null, limit: number): ExportQuery {
  if (filter.updatedSince === undefined) return { ...filter, beforeId: after?.id ?? null, limit };
  const position = after && { updatedAt: after.updatedAt ?? 0, id: after.id };
  return { ...filter, beforeId: null, changed: { since: filter.updatedSince, after: position }, limit };
}

/** Leads out of the database, as JSON pages and as CSV, for integrators and for `/stickers_export`. */
@Injectable()
export class ExportService {
  private readonly local: Intl.DateTimeFormat;
  /** The CSV exports' turns and the searches' (one at a time); their `state` for the tests. */
  readonly exportTurns = new Turns(EXPORTS_AT_ONCE);
  readonly searchTurns = new Turns(1);
  private readonly cursorKey: Buffer;
  private readonly phoneRegion: PhoneRegion;

  constructor(
    @Inject(SERVER_CONFIG) config: ServerConfig,
    private readonly leads: LeadPagesRepository,
    private readonly clock: Clock,
    private readonly telegramLinks: TelegramLinksRepository,
  ) {
    this.cursorKey = cursorKey(config.leads.secret, config.leads.ipSalt);
    this.phoneRegion = config.leads.phoneRegion;
    // `2026-11-29 12:00:00` in LEADS_TIMEZONE.
    this.local = new Intl.DateTimeFormat('sv-SE', { ...WALL_CLOCK_FIELDS, timeZone: config.timezone });
  }

  /** The filter of a checked query: since, until, status, and the inbox's source and q (its DTOs' alone). */
  private filter(query: LeadsQuery, options: ExportOptions = {}): ExportFilter {
    const filter: ExportFilter = { since: query.since ?? null, until: query.until ?? null, status: query.status ?? null };
    if (query.updated_since !== undefined) filter.updatedSince = query.updated_since;
    if (query.source !== undefined) filter.source = sourceFilter(query.source);
    const search = query.q === undefined ? null : parseSearch(query.q, options.hidePersonal !== true, this.phoneRegion);
    if (search) filter.search = search;
    if (options.scope) filter.scope = options.scope;
    return filter;
  }

  /** One page, newest first; with `updated_since` oldest change first (then by number), the cursor holding both. */
  async page(query: LeadsQuery, options: ExportOptions = {}): Promise<LeadsPageDto> {
    const limit = query.limit ?? EXPORT_LIMIT_DEFAULT;
    const position = query.cursor === undefined ? null : readCursor(query.cursor, this.cursorKey);
    if (position === undefined) throw new Error('an unchecked cursor reached the export');
    const filter = this.filter(query, options);
    const read = () => this.leads.exportPage(pageAfter(filter, position, limit + 1));
    const rows = filter.search ? await this.searching(read) : await read();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const changes = filter.updatedSince !== undefined;
    const next = rows.length <= limit ? null : encodeCursor(last.id, this.cursorKey, changes ? last.updated_at : null);
    return { leads: await this.withRepeats(page, options.hidePersonal === true), next_cursor: next };
  }

  /** One lead as `GET /leads` shows it, or null when there is none of that number (or none the scope lets one see). */
  async lead(leadNumber: number, options: ExportOptions = {}): Promise<ExportedLead | null> {
    const [row] = await this.leads.exportPage({ ...pageAfter(this.filter({}, options), null, 1), id: leadNumber });
    return row ? (await this.withRepeats([row], options.hidePersonal === true))[0] : null;
  }

  /** The rows as `GET /leads` shows them, each with its repeats (one read for the page). */
  private async withRepeats(rows: ExportRow[], hide: boolean): Promise<ExportedLead[]> {
    const repeats = await this.leads.repeatsOf(rows.filter((r) => Number(r.repeats) > 0).map((r) => r.id));
    const accounts = await this.telegramLinks.accountsOf(rows.map((r) => r.id));
    const repeatsOf = (id: number) => repeats.filter((repeat) => repeat.lead_id === id);
    return rows.map((r) => toJson(r, hide, repeatsOf(r.id), accounts.get(r.id) ?? null));
  }

  /** The CSV, a page at a time with a turn of the event loop between pages (SQLite reads synchronously) for the requests beside it. */
  async *csv(query: LeadsQuery, options: ExportOptions = {}): AsyncGenerator<string> {
    const filter = this.filter(query, options);
    const done = await this.exportTurns.take();
    try {
      yield CSV_BOM + csvRow(CSV_COLUMNS);
      let last: CursorPosition | null = null;
      for (;;) {
        const rows = await this.leads.exportPage(pageAfter(filter, last, CSV_PAGE));
        for (const row of rows) {
          const r = shown(row, options.hidePersonal);
          yield csvRow(CSV.map(([, cell]) => cell(r, (ms) => this.local.format(new Date(ms)))));
        }
        if (rows.length < CSV_PAGE) return;
        last = { id: rows[rows.length - 1].id, updatedAt: rows[rows.length - 1].updated_at };
        await nextTurnOfTheLoop();
      }
    } finally {
      done();
    }
  }

  /** A search (`q`) matches no index and may read the whole table: one at a time, after a turn of the event loop. */
  private async searching<T>(read: () => Promise<T>): Promise<T> {
    const done = await this.searchTurns.take();
    try {
      await nextTurnOfTheLoop();
      return await read();
    } finally {
      done();
    }
  }

  /** The CSV of the leads created in the last `days` days, whole (for the bot's document), and how many rows. */
  async csvOfDays(days: number): Promise<{ content: Buffer; rows: number }> {
    const parts: string[] = [];
    for await (const part of this.csv({ since: this.clock.now() - days * DAY_MS })) parts.push(part);
    return { content: Buffer.from(parts.join(''), 'utf8'), rows: parts.length - 1 };
  }
}
