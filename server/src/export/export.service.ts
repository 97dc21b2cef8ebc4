import { setImmediate as nextTurnOfTheLoop } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_FIELDS, type CaptchaResult } from '@stickers/shared';
import type { FormColumns } from '../domain/lead';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';
import { withoutPersonal } from '../domain/personal-fields';
import { LeadsRepository, type ExportRow, type LeadScope, type LeadSearch } from '../repositories/leads.repository';
import { CSV_BOM, csvRow } from './csv.writer';
import { cursorKey, decodeCursor, encodeCursor, parseExportTime } from './export-query';
import { Turns } from './export-turns';

export const EXPORT_LIMIT_DEFAULT = 50;
export const EXPORT_LIMIT_MAX = 200;
const CSV_PAGE = 200;
/** How many CSV exports read the database at once; more wait their turn (Turns). */
export const EXPORTS_AT_ONCE = 2;
/** How many inbox searches (`q`) read the database at once; more wait their turn. */
export const SEARCHES_AT_ONCE = 1;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The filters of `GET /leads` and `GET /leads/export.csv`, checked. */
export interface ExportFilter {
  since: number | null;
  until: number | null;
  status: LeadStatus | null;
  /** The inbox's filters (ExportOptions.inbox): the source (null: leads without one) and the search. */
  source?: string | null;
  search?: LeadSearch;
  /** The inbox viewer's leads (ExportOptions.scope); undefined: every lead. */
  scope?: LeadScope;
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

/** `source=none`: the leads that came without a source. */
export const NO_SOURCE = 'none';
const SOURCE_VALUE = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u;
export const SOURCE_RULE = `must be a source name (as LANDING_SOURCE) or ${NO_SOURCE}`;
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
const SEARCH_MAX = 100;
/**
 * A control character (U+0000–U+001F, U+007F–U+009F): nothing a person searches for, and PostgreSQL refuses a NUL in
 * any text it is given, so `q` holding one is refused (422) before any query.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;
const SEARCH_RULE = `must be a text of at most ${SEARCH_MAX} characters, without control characters`;

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

/** The `error` of a 422 for a bad query parameter. */
export const INVALID_QUERY = 'invalid_query';

/** A bad query parameter: answered 422 with every problem by name. */
export class ExportQueryError extends Error {
  constructor(readonly problems: Record<string, string>) {
    super(`invalid query: ${Object.keys(problems).join(', ')}`);
  }
}

/**
 * A lead as `GET /leads` shows it: its number, status and times, then every field of the form (`LEAD_FIELDS`, in
 * that order), where it came from and how many repeats. Personal fields (and the source's) are null once anonymised.
 * Times are ISO 8601 (UTC).
 */
export interface ExportedLead extends FormColumns {
  lead_number: number;
  request_id: string;
  status: LeadStatus;
  status_changed_by: string | null;
  status_changed_at: string | null;
  created_at: string;
  received_at: string;
  published_at: string | null;
  anonymised_at: string | null;
  /** Where the lead came from: the landing's name, the UTM parameters, the referrer's host; null without. */
  source: ExportedSource | null;
  /** The visitor's consent as the landing sent it (time ISO 8601); null without. Kept when the lead is anonymised. */
  consent: ExportedConsent | null;
  repeats: number;
  /** What came of the landing's captcha: `passed`, `unchecked` (its provider was unreachable), null without one. */
  captcha: CaptchaResult | null;
}

export interface ExportedConsent {
  accepted_at: string;
  policy_url: string;
}

export interface ExportedSource {
  landing: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  referrer: string | null;
}

export interface ExportPage {
  leads: ExportedLead[];
  /** Pass it back as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
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

type Query = Record<string, unknown>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Why a `since` or `until` is refused (the strict reading of export-query.ts). */
const TIME_RULE = 'must be an ISO 8601 date or time that exists (no 30 February, no 24:00), or milliseconds since the epoch';

/** Leads out of the database, as JSON pages and as CSV, for integrators and for `/stickers_export`. */
@Injectable()
export class ExportService {
  private readonly local: Intl.DateTimeFormat;
  private readonly turns = new Turns(EXPORTS_AT_ONCE);
  private readonly searchTurns = new Turns(SEARCHES_AT_ONCE);
  private readonly cursorKey: Buffer;

  constructor(
    @Inject(SERVER_CONFIG) config: ServerConfig,
    private readonly leads: LeadsRepository,
    private readonly clock: Clock,
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

  /** Reads since, until and status (and for the inbox source and q); throws ExportQueryError with every problem. */
  filter(query: Query, problems: Record<string, string> = {}, options: ExportOptions = {}): ExportFilter {
    const extra = options.inbox ? this.inboxFilter(query, problems, options.hidePersonal !== true) : {};
    const since = parseExportTime(query.since);
    const until = parseExportTime(query.until);
    if (since === undefined) problems.since = TIME_RULE;
    if (until === undefined) problems.until = TIME_RULE;
    const rawStatus = query.status;
    const status = rawStatus === undefined || rawStatus === '' ? null : rawStatus;
    if (status !== null && !(LEAD_STATUSES as readonly unknown[]).includes(status))
      problems.status = `must be one of ${LEAD_STATUSES.join(', ')}`;
    if (typeof since === 'number' && typeof until === 'number' && since >= until) problems.until = 'must be after since';
    if (Object.keys(problems).length > 0) throw new ExportQueryError(problems);
    const scope = options.scope ? { scope: options.scope } : {};
    return { since: since!, until: until!, status: status as LeadStatus | null, ...extra, ...scope };
  }

  private inboxFilter(query: Query, problems: Record<string, string>, personal: boolean): Pick<ExportFilter, 'source' | 'search'> {
    const out: Pick<ExportFilter, 'source' | 'search'> = {};
    const source = readSourceParam(query.source);
    if (source === INVALID_SOURCE) problems.source = SOURCE_RULE;
    else if (source !== undefined) out.source = source;
    const q = query.q;
    if (q !== undefined) {
      if (typeof q !== 'string' || q.length > SEARCH_MAX || CONTROL_CHARACTER.test(q)) problems.q = SEARCH_RULE;
      else out.search = parseSearch(q, { personal }) ?? undefined;
    }
    return out;
  }

  /** The cursor of the page that starts right below lead `id` (signed with this server's key). */
  cursorAbove(id: number): string {
    return encodeCursor(id, this.cursorKey);
  }

  /** `GET /leads` (and the inbox's list): one page, newest first. */
  async page(query: Query, options: ExportOptions = {}): Promise<ExportPage> {
    const problems: Record<string, string> = {};
    let limit = EXPORT_LIMIT_DEFAULT;
    // An empty parameter (`limit=`) counts as absent, as every other filter's.
    if (query.limit !== undefined && query.limit !== '') {
      limit = typeof query.limit === 'string' && /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
      if (!(limit >= 1 && limit <= EXPORT_LIMIT_MAX)) problems.limit = `must be an integer from 1 to ${EXPORT_LIMIT_MAX}`;
    }
    let beforeId: number | null = null;
    if (query.cursor !== undefined && query.cursor !== '') {
      const id = decodeCursor(query.cursor, this.cursorKey);
      if (id === undefined) problems.cursor = 'is not a cursor this API gave';
      else beforeId = id;
    }
    const filter = this.filter(query, problems, options);
    const rows = filter.search
      ? await this.searching(() => this.leads.exportPage({ ...filter, beforeId, limit: limit + 1 }))
      : await this.leads.exportPage({ ...filter, beforeId, limit: limit + 1 });
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const hide = options.hidePersonal === true;
    return { leads: page.map((r) => toJson(r, hide)), next_cursor: more ? this.cursorAbove(page[page.length - 1].id) : null };
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
    return row ? toJson(row, options.hidePersonal === true) : null;
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
      let beforeId: number | null = null;
      for (;;) {
        const rows = await this.leads.exportPage({ ...filter, beforeId, limit: CSV_PAGE });
        for (const row of rows) yield this.csvLine(options.hidePersonal ? withoutPersonal(row) : row);
        if (rows.length < CSV_PAGE) return;
        beforeId = rows[rows.length - 1].id;
        await nextTurnOfTheLoop();
      }
    } finally {
      done();
    }
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

/** The row as it may be shown: an anonymised lead without any personal column (domain/personal-fields.ts). */
const shown = (r: ExportRow): ExportRow => (r.anonymised_at === null ? r : withoutPersonal(r));

function toJson(row: ExportRow, hidePersonal = false): ExportedLead {
  const r = hidePersonal ? withoutPersonal(row) : shown(row);
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
    ...(Object.fromEntries(LEAD_FIELDS.map((f) => [f, r[f]])) as FormColumns),
    source: sourceOf(r),
    consent: consentOf(r),
    repeats: Number(r.repeats),
    captcha: r.captcha,
  };
}

function sourceOf(r: ExportRow): ExportedSource | null {
  const source: ExportedSource = {
    landing: r.source_landing,
    utm_source: r.utm_source,
    utm_medium: r.utm_medium,
    utm_campaign: r.utm_campaign,
    utm_content: r.utm_content,
    utm_term: r.utm_term,
    referrer: r.source_referrer,
  };
  return Object.values(source).some((v) => v !== null) ? source : null;
}

function consentOf(r: ExportRow): ExportedConsent | null {
  if (r.consent_accepted_at === null || r.consent_policy_url === null) return null;
  return { accepted_at: iso(r.consent_accepted_at)!, policy_url: r.consent_policy_url };
}
