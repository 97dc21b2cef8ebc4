import { setImmediate as nextTurnOfTheLoop } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_FIELDS } from '@stickers/shared';
import type { LeadStatus } from '../domain/lead-status';
import { withoutPersonal } from '../domain/personal-fields';
import {
  LeadPagesRepository,
  type ExportQuery,
  type ExportRow,
  type LeadScope,
  type LeadSearch,
} from '../repositories/lead-pages.repository';
import { CSV_BOM, csvRow } from './csv.writer';
import { iso, shown, toJson, type ExportedLead, type ExportPage } from './exported-lead';
import { checkPlain } from '../http/validation';
import {
  cursorKey,
  encodeCursor,
  EXPORT_LIMIT_DEFAULT,
  EXPORT_LIMIT_MAX,
  INVALID_QUERY,
  NO_SOURCE,
  parseExportTime,
  QUERY_RULES,
  readCursor,
  SOURCE_VALUE,
} from './export-query';
import { InboxPageQuery, LeadsPageQuery, type CursorContext } from './export-query.dto';
import { Turns } from './export-turns';
import { TelegramLinksRepository } from '../conversations/telegram-links.repository';

const CSV_PAGE = 200;
/** How many CSV exports read the database at once; more wait their turn (Turns). */
export const EXPORTS_AT_ONCE = 2;
/** How many inbox searches (`q`) read the database at once; more wait their turn. */
export const SEARCHES_AT_ONCE = 1;
const DAY_MS = 24 * 60 * 60 * 1000;

export { EXPORT_LIMIT_DEFAULT, EXPORT_LIMIT_MAX, INVALID_QUERY, NO_SOURCE };
export type { ExportedConsent, ExportedLead, ExportedRepeat, ExportedSource, ExportPage } from './exported-lead';
/** Why a `source` is refused (the charts' own check reads it here). */
export const SOURCE_RULE = QUERY_RULES.source;

/** The filters of `GET /leads` and `GET /leads/export.csv`, checked. */
export interface ExportFilter {
  since: number | null;
  until: number | null;
  status: LeadStatus | null;
  /** `updated_since`: leads whose state changed at or after it, in the order of the changes; undefined: none. */
  updatedSince?: number;
  /** The inbox's filters (ExportOptions.inbox): the source (null: leads without one) and the search. */
  source?: string | null;
  search?: LeadSearch;
  /** The inbox viewer's leads (ExportOptions.scope); undefined: every lead. */
  scope?: LeadScope;
}

/**
 * A query of the routes that read leads, every parameter already checked by its DTO (export-query.dto.ts): present
 * only when given and not empty, each one a value that exists (a time, a status, this server's cursor).
 */
export interface LeadsQuery {
  limit?: number;
  cursor?: string;
  since?: string;
  until?: string;
  status?: LeadStatus;
  updated_since?: string;
  /** The inbox's (ExportOptions.inbox). */
  source?: string;
  q?: string;
}

/**
 * How a caller reads leads: the inbox's extra filters, and personal values hidden (LEADS_CARD_PII=0 for the inbox):
 * then none is shown, and the search matches none (parseSearch).
 */
export interface ExportOptions {
  /** `source` and `q` are read too (`GET /inbox/api/leads`); `GET /leads` takes neither. */
  inbox?: boolean;
  hidePersonal?: boolean;
  /** Only the leads an inbox viewer may see; null or absent: every lead. */
  scope?: LeadScope | null;
}

export const INVALID_SOURCE = Symbol('invalid source');

/**
 * The inbox's `source` parameter (the list, the CSV, the charts): undefined for any source (absent or empty), null for
 * `none` (leads without one), the landing's name, or INVALID_SOURCE.
 */
export function readSourceParam(raw: unknown): string | null | undefined | typeof INVALID_SOURCE {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !SOURCE_VALUE.test(raw)) return INVALID_SOURCE;
  return raw === NO_SOURCE ? null : raw;
}

/**
 * The inbox's `q`: `#42` or `№42` is a lead number; digits alone are a number or a part of a phone; anything else a
 * part of a name (any case), of a username (without `@`) or of a phone's digits (when it looks like a phone).
 *
 * With personal values hidden (`personal: false`, LEADS_CARD_PII=0) it matches only what the viewer sees: `#42`, `№42`
 * or digits alone are a lead number, anything else a part of the landing's source name (any case) — never a name, a
 * username or a phone, which a search would otherwise let a viewer rebuild a character at a time.
 */
export function parseSearch(raw: string, o: { personal: boolean } = { personal: true }): LeadSearch | null {
  const q = raw.trim();
  if (q === '') return null;
  const none: LeadSearch = { number: null, name: null, username: null, phoneDigits: null, source: null };
  const numbered = /^[#№]\s*(\d{1,15})$/.exec(q);
  if (numbered) return { ...none, number: Number(numbered[1]) };
  if (/^\d{1,15}$/.test(q)) return { ...none, number: Number(q), phoneDigits: o.personal ? q : null };
  const lower = q.toLowerCase();
  if (!o.personal) return { ...none, source: lower };
  const digits = q.replace(/\D/g, '');
  const phoneLike = /^[+\d\s().-]+$/.test(q) && digits.length >= 3;
  return {
    ...none,
    name: phoneLike ? null : lower,
    username: phoneLike ? null : lower.replace(/^@/, ''),
    phoneDigits: phoneLike ? digits : null,
  };
}

/** A bad query parameter: answered 422 with every problem by name. */
export class ExportQueryError extends Error {
  constructor(readonly problems: Record<string, string>) {
    super(`invalid query: ${Object.keys(problems).join(', ')}`);
  }
}

export const CSV_COLUMNS = [
  'number',
  'created_at',
  'created_local',
  'received_at',
  'received_local',
  'status',
  'status_changed_by',
  ...LEAD_FIELDS,
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  'referrer',
  'consent_accepted_at',
  'consent_policy_url',
  'repeats',
  'captcha',
] as const;

/** A time of a checked query: null when absent (the DTO refused every time that names no instant). */
function instant(raw: string | undefined): number | null {
  const at = parseExportTime(raw);
  if (at === undefined) throw new Error('an unchecked time reached the export');
  return at;
}

/** Leads out of the database, as JSON pages and as CSV, for integrators and for `/stickers_export`. */
@Injectable()
export class ExportService {
  private readonly local: Intl.DateTimeFormat;
  private readonly turns = new Turns(EXPORTS_AT_ONCE);
  private readonly searchTurns = new Turns(SEARCHES_AT_ONCE);
  private readonly cursorKey: Buffer;

  constructor(
    @Inject(SERVER_CONFIG) config: ServerConfig,
    private readonly leads: LeadPagesRepository,
    private readonly clock: Clock,
    private readonly telegramLinks: TelegramLinksRepository,
  ) {
    this.cursorKey = cursorKey(config.leads.secret, config.leads.ipSalt);
    this.local = new Intl.DateTimeFormat('sv-SE', {
      timeZone: config.timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
  }

  /** The filter of a checked query (a route's DTO, or page's own check): since, until, status, and the inbox's source and q. */
  filter(query: LeadsQuery, options: ExportOptions = {}): ExportFilter {
    const filter: ExportFilter = { since: instant(query.since), until: instant(query.until), status: query.status ?? null };
    const updatedSince = instant(query.updated_since);
    if (updatedSince !== null) filter.updatedSince = updatedSince;
    if (options.inbox) {
      const source = readSourceParam(query.source);
      if (source === INVALID_SOURCE) throw new Error('an unchecked source reached the export');
      if (source !== undefined) filter.source = source;
      const search = query.q === undefined ? null : parseSearch(query.q, { personal: options.hidePersonal !== true });
      if (search) filter.search = search;
    }
    if (options.scope) filter.scope = options.scope;
    return filter;
  }

  /** The cursor of the page that starts right below lead `id` (signed with this server's key). */
  cursorAbove(id: number): string {
    return encodeCursor(id, this.cursorKey);
  }

  /** What the cursor rule of the queries' DTOs needs (LeadsQueryPipe gives the same key from the configuration). */
  get cursorContext(): CursorContext {
    return { cursorKey: this.cursorKey };
  }

  /**
   * A page of a query from inside the server (not a request): checked with the routes' own DTO (LeadsPageQuery, or
   * InboxPageQuery for the inbox); a bad parameter throws ExportQueryError with every problem by name.
   */
  async page(query: Record<string, unknown>, options: ExportOptions = {}): Promise<ExportPage> {
    const checked = checkPlain(options.inbox ? InboxPageQuery : LeadsPageQuery, query, this.cursorContext);
    if (!checked.ok) throw new ExportQueryError(checked.problems);
    return this.checkedPage(checked.value, options);
  }

  /**
   * `GET /leads` (and the inbox's list): one page of a checked query, newest first; with `updated_since`, oldest
   * change first (then by number), its cursor holding the last lead's change and number.
   */
  async checkedPage(query: LeadsQuery, options: ExportOptions = {}): Promise<ExportPage> {
    const limit = query.limit ?? EXPORT_LIMIT_DEFAULT;
    const position = query.cursor === undefined ? null : readCursor(query.cursor, this.cursorKey);
    if (position === undefined) throw new Error('an unchecked cursor reached the export');
    const filter = this.filter(query, options);
    const changes = filter.updatedSince !== undefined;
    const read: Omit<ExportQuery, 'limit'> = changes
      ? {
          ...filter,
          beforeId: null,
          changed: { since: filter.updatedSince!, after: position && { updatedAt: position.updatedAt ?? 0, id: position.id } },
        }
      : { ...filter, beforeId: position?.id ?? null };
    const rows = filter.search
      ? await this.searching(() => this.leads.exportPage({ ...read, limit: limit + 1 }))
      : await this.leads.exportPage({ ...read, limit: limit + 1 });
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const hide = options.hidePersonal === true;
    const last = page[page.length - 1];
    const next = !more ? null : changes ? encodeCursor(last.id, this.cursorKey, last.updated_at) : this.cursorAbove(last.id);
    return { leads: await this.withRepeats(page, hide), next_cursor: next };
  }

  /**
   * One lead as `GET /leads` shows it (the inbox's lead page), or null when there is none of that number (or none
   * the scope lets the viewer see).
   */
  async lead(leadNumber: number, options: Pick<ExportOptions, 'hidePersonal' | 'scope'> = {}): Promise<ExportedLead | null> {
    const [row] = await this.leads.exportPage({
      since: null,
      until: null,
      status: null,
      beforeId: null,
      id: leadNumber,
      limit: 1,
      ...(options.scope ? { scope: options.scope } : {}),
    });
    return row ? (await this.withRepeats([row], options.hidePersonal === true))[0] : null;
  }

  /** The rows as `GET /leads` shows them, each with its repeats (one read for the page). */
  private async withRepeats(rows: ExportRow[], hide: boolean): Promise<ExportedLead[]> {
    const repeated = rows.filter((r) => Number(r.repeats) > 0).map((r) => r.id);
    const repeats = await this.leads.repeatsOf(repeated);
    const accounts = await this.telegramLinks.accountsOf(rows.map((r) => r.id));
    return rows.map((r) =>
      toJson(
        r,
        hide,
        repeats.filter((repeat) => repeat.lead_id === r.id),
        accounts.get(r.id) ?? null,
      ),
    );
  }

  /**
   * The CSV, row by row (BOM and header first), read from the database a page at a time. On SQLite a page is read
   * synchronously, so between two pages the export gives the event loop a turn (`setImmediate`): requests beside it
   * (POST /leads, /health) are answered while it runs instead of after it. At most EXPORTS_AT_ONCE exports read at
   * once (a turn held for the whole run; the others wait their turn before their first row), so many exports at
   * once cannot stack their pages between two turns of the loop either.
   */
  async *csv(filter: ExportFilter, options: Pick<ExportOptions, 'hidePersonal'> = {}): AsyncGenerator<string> {
    const done = await this.turns.take();
    try {
      yield CSV_BOM + csvRow(CSV_COLUMNS);
      let last: ExportRow | null = null;
      for (;;) {
        const rows = await this.leads.exportPage(this.csvPage(filter, last));
        for (const row of rows) yield this.csvLine(options.hidePersonal ? withoutPersonal(row) : row);
        if (rows.length < CSV_PAGE) return;
        last = rows[rows.length - 1];
        await nextTurnOfTheLoop();
      }
    } finally {
      done();
    }
  }

  /** The CSV's page after the row `last` (null: the first): below its number, or after its change (`updated_since`). */
  private csvPage(filter: ExportFilter, last: ExportRow | null): ExportQuery {
    if (filter.updatedSince === undefined) return { ...filter, beforeId: last?.id ?? null, limit: CSV_PAGE };
    const after = last && { updatedAt: last.updated_at, id: last.id };
    return { ...filter, beforeId: null, changed: { since: filter.updatedSince, after }, limit: CSV_PAGE };
  }

  /**
   * A search's read (the inbox's `q`): a part of a name, username or phone matches no index, so a search that finds
   * little reads the whole table — synchronously on SQLite. One search reads at a time (SEARCHES_AT_ONCE), each after
   * a turn of the event loop, so searches at once run one per turn of the loop instead of back to back, and a POST
   * /leads beside them waits for one search at most.
   */
  private async searching<T>(read: () => Promise<T>): Promise<T> {
    const done = await this.searchTurns.take();
    try {
      await nextTurnOfTheLoop();
      return await read();
    } finally {
      done();
    }
  }

  /** How many searches read now and how many wait their turn. */
  get searchTurnsState(): { held: number; waiting: number } {
    return this.searchTurns.state;
  }

  /** How many exports read now and how many wait their turn. */
  get exportTurns(): { held: number; waiting: number } {
    return this.turns.state;
  }

  /** The CSV of the leads created in the last `days` days, whole (for the bot's document), and how many rows. */
  async csvOfDays(days: number): Promise<{ content: Buffer; rows: number }> {
    const parts: string[] = [];
    for await (const part of this.csv({ since: this.clock.now() - days * DAY_MS, until: null, status: null })) parts.push(part);
    return { content: Buffer.from(parts.join(''), 'utf8'), rows: parts.length - 1 };
  }

  private csvLine(row: ExportRow): string {
    const r = shown(row);
    const received = r.received_at ?? r.created_at;
    return csvRow([
      r.id,
      iso(r.created_at),
      this.localTime(r.created_at),
      iso(received),
      this.localTime(received),
      r.status,
      r.status_changed_by,
      ...LEAD_FIELDS.map((f) => r[f]),
      r.source_landing,
      r.utm_source,
      r.utm_medium,
      r.utm_campaign,
      r.utm_content,
      r.utm_term,
      r.source_referrer,
      iso(r.consent_accepted_at),
      r.consent_policy_url,
      Number(r.repeats),
      r.captcha,
    ]);
  }

  /** `2026-11-29 12:00:00` in LEADS_TIMEZONE. */
  private localTime(ms: number): string {
    return this.local.format(new Date(ms));
  }
}
