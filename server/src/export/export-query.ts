import { createHmac, timingSafeEqual } from 'node:crypto';
import { applyDecorators, type ArgumentMetadata, HttpException, Inject, Injectable } from '@nestjs/common';
import { IntersectionType, PickType } from '@nestjs/swagger';
import { type ClassTransformOptions, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy, type ValidationArguments } from 'class-validator';
import { instantOfWallTime } from '../clock/local-time';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { SOURCE_NAME } from '../config/telegram-settings';
import { LEAD_STATUSES, STATUS_RULE, type LeadStatus } from '../domain/lead-status';
import { SEARCH_MAX } from '../domain/lead';
import { ApiValidationPipe, CROSS_FIELD, invalidQuery, validationContext } from '../http/validation';

/** The queries of the routes that read leads, checked by LeadsQueryPipe: a value names exactly one thing or is refused (422). */

export const EXPORT_LIMIT_DEFAULT = 50;
export const EXPORT_LIMIT_MAX = 200;

const NO_SOURCE = 'none';
/** A checked `source` as the repositories take it: null for `none` (leads without one), else the landing's name. */
export const sourceFilter = (source: string): string | null => (source === NO_SOURCE ? null : source);
/** PostgreSQL refuses a NUL in any text: a control character is refused (422) before any query. */
const NO_CONTROL_CHARACTER = /^\P{Cc}*$/u;

/** Why a parameter is refused (422 `invalid_query`, `errors.<parameter>`), as docs/api.md lists them. */
export const QUERY_RULES = {
  time: 'must be an ISO 8601 date or time that exists (no 30 February, no 24:00), or milliseconds since the epoch',
  afterSince: 'must be after since',
  status: STATUS_RULE,
  limit: `must be an integer from 1 to ${EXPORT_LIMIT_MAX}`,
  cursor: 'is not a cursor this API gave',
  event: 'must be the id of an event this API listed (evt_ and 32 hex digits)',
  unknownEvent: 'no event has this id',
  source: `must be a source name (as LANDING_SOURCE) or ${NO_SOURCE}`,
  q: `must be a text of at most ${SEARCH_MAX} characters, without control characters`,
  once: 'must be given once',
} as const;

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/;
const EPOCH_MS = /^\d{1,15}$/;

/**
 * Epoch ms, an ISO 8601 date (midnight UTC) or date-time (no zone: `timezone`'s wall clock, an hour it skips naming no
 * instant); null when empty, undefined when no real instant. Digits past the millisecond round up: stored times are
 * whole milliseconds, so `>= t` and `< t` select the same rows as for the exact time.
 */
export function parseExportTime(raw: unknown, timezone = 'UTC'): number | null | undefined {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string' || raw.length > 40) return undefined;
  if (EPOCH_MS.test(raw)) return Number(raw);
  const m = DATE_TIME.exec(raw);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = m[7] ?? '';
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3)) + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  let offsetMin = 0;
  if (m[9] !== undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // A date that does not exist (month 13, 30 February) rolls over into another month.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  date.setUTCHours(hour, minute, second);
  if (m[4] !== undefined && m[8] === undefined) {
    const local = instantOfWallTime(date.getTime(), timezone);
    return local.exists ? local.at + ms : undefined;
  }
  const at = date.getTime() + ms - offsetMin * 60_000;
  return Number.isFinite(at) ? at : undefined;
}

/** The key that signs cursors, from LEADS_SECRET and LEADS_IP_SALT: the same on every instance, unknown to others. */
export function cursorKey(secret: string, salt: string): Buffer {
  return createHmac('sha256', `${secret}\n${salt}`).update('stickers-leads cursor').digest();
}

function cursorMac(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
}

/** Where a page ends: the last lead's number, and with `updated_since` its `updated_at` too. */
export interface CursorPosition {
  id: number;
  updatedAt: number | null;
}

/** The opaque cursor: base64url of `{"id":n}` (with `updated_since`, `{"u":updated_at,"id":n}`), a dot, its signature. */
export function encodeCursor(id: number, key: Buffer, updatedAt: number | null = null): string {
  const position = updatedAt === null ? { id } : { u: updatedAt, id };
  const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${payload}.${cursorMac(key, payload)}`;
}

/** The position of a cursor this API gave (either order); undefined for anything else. */
export function readCursor(raw: unknown, key: Buffer): CursorPosition | undefined {
  if (typeof raw !== 'string' || raw.length > 100 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/.test(raw)) return undefined;
  const [payload, mac] = raw.split('.');
  const expected = Buffer.from(cursorMac(key, payload));
  if (!timingSafeEqual(Buffer.from(mac), expected)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { id, u } = (value ?? {}) as { id?: unknown; u?: unknown };
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return undefined;
  if (u !== undefined && (typeof u !== 'number' || !Number.isSafeInteger(u) || u < 0)) return undefined;
  return encodeCursor(id, key, u ?? null) === raw ? { id, updatedAt: u ?? null } : undefined;
}

type CursorContext = { cursorKey: Buffer };
/** class-transformer hands its options to every `@Transform`: a time without a zone is read in LEADS_TIMEZONE. */
type ZonedTransform = ClassTransformOptions & { timezone?: string };

/** The ValidationPipe of these DTOs: 422 `invalid_query` naming every bad parameter; a provider, for the cursor's key and the zone. */
@Injectable()
export class LeadsQueryPipe extends ApiValidationPipe {
  constructor(@Inject(SERVER_CONFIG) config: ServerConfig) {
    const transformOptions: ZonedTransform = { timezone: config.timezone };
    super(invalidQuery, { cursorKey: cursorKey(config.leads.secret, config.leads.ipSalt) } satisfies CursorContext, { transformOptions });
  }

  /**
   * A parameter given twice (`?status=won&status=lost`, a list in Express's query): every rule refuses a list, and its
   * words become "given once", in the DTO's order; a name no rule reads is dropped as ever.
   */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (err) {
      const query = (value ?? {}) as Record<string, unknown>;
      const repeated = new Set(Object.keys(query).filter((name) => Array.isArray(query[name])));
      if (repeated.size === 0 || !(err instanceof HttpException && err.getStatus() === 422)) throw err;
      const { errors } = err.getResponse() as { errors: Record<string, string> };
      throw invalidQuery(
        Object.fromEntries(Object.entries(errors).map(([name, why]) => [name, repeated.has(name) ? QUERY_RULES.once : why])),
      );
    }
  }
}

/** A rule: its name (the constraint a problem is listed under), its 422 words, its check. */
const Rule = (name: string, message: string, validate: (value: unknown, args: ValidationArguments) => boolean, context?: object) =>
  ValidateBy({ name, validator: { validate } }, { message, context });

function afterSince(until: unknown, args: ValidationArguments): boolean {
  const { since } = args.object as { since?: unknown };
  return typeof since !== 'number' || typeof until !== 'number' || since < until;
}

/** A cursor exactly as this server signed it, of the order of changes only with `updated_since`, of numbers only without. */
function apiCursor(value: unknown, args: ValidationArguments): boolean {
  const context = validationContext<CursorContext>(args);
  if (!context) throw new Error('the cursor rule needs the cursor key (CursorContext)');
  const position = readCursor(value, context.cursorKey);
  const changes = (args.object as { updated_since?: unknown }).updated_since !== undefined;
  return position !== undefined && (position.updatedAt !== null) === changes;
}

/** An empty parameter (`status=`) counts as absent. */
export const QueryParam = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value)),
    IsOptional(),
  );

/** 1–EXPORT_LIMIT_MAX written in digits only (`1e2` refused). */
export const Limit = () =>
  applyDecorators(
    QueryParam(),
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value)),
    IsInt({ message: QUERY_RULES.limit }),
    Min(1, { message: QUERY_RULES.limit }),
    Max(EXPORT_LIMIT_MAX, { message: QUERY_RULES.limit }),
  );
const Cursor = () => applyDecorators(QueryParam(), Rule('apiCursor', QUERY_RULES.cursor, apiCursor));
/** A time, read as its instant (epoch ms); one that names none stays as written, and is refused. */
export const Since = () =>
  applyDecorators(
    Transform(
      ({ value, options }: { value: unknown; options: ZonedTransform }) =>
        parseExportTime(value, options.timezone) ?? (value === '' ? undefined : value),
    ),
    IsOptional(),
    Rule('existingTime', QUERY_RULES.time, (value) => typeof value === 'number'),
  );
const Until = () => applyDecorators(Since(), Rule('afterSince', QUERY_RULES.afterSince, afterSince, CROSS_FIELD));
const Status = () => applyDecorators(QueryParam(), IsIn([...LEAD_STATUSES], { message: QUERY_RULES.status }));
const Source = () => applyDecorators(QueryParam(), Matches(SOURCE_NAME, { message: QUERY_RULES.source }));
const Search = () =>
  applyDecorators(
    QueryParam(),
    IsString({ message: QUERY_RULES.q }),
    MaxLength(SEARCH_MAX, { message: QUERY_RULES.q }),
    Matches(NO_CONTROL_CHARACTER, { message: QUERY_RULES.q }),
  );

class PageParams {
  @Limit() limit?: number;
  @Cursor() cursor?: string;
}

class InboxParams {
  @Source() source?: string;
  @Search() q?: string;
}

class CreatedParams {
  @Since() since?: number;
  @Until() until?: number;
  @Status() status?: LeadStatus;
}

class ChangedParams {
  @Since() updated_since?: number;
}

// IntersectionType keeps the rules in the order of its classes: the order a 422 names the parameters in.
export class LeadsFilterQuery extends IntersectionType(CreatedParams, ChangedParams) {}
export class LeadsPageQuery extends IntersectionType(PageParams, LeadsFilterQuery) {}
export class InboxFilterQuery extends IntersectionType(InboxParams, CreatedParams) {}
export class InboxPageQuery extends IntersectionType(PageParams, InboxFilterQuery) {}
export class InboxChartsQuery extends PickType(InboxParams, ['source'] as const) {}
