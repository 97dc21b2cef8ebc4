import { applyDecorators, HttpException, Inject, Injectable } from '@nestjs/common';
import { IntersectionType, PickType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy, type ValidationArguments } from 'class-validator';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';
import { ApiValidationPipe, CROSS_FIELD, validationContext } from '../http/validation';
import {
  cursorKey,
  EXPORT_LIMIT_MAX,
  INVALID_QUERY,
  NO_CONTROL_CHARACTER,
  parseExportTime,
  QUERY_RULES,
  readCursor,
  SEARCH_MAX,
  SOURCE_VALUE,
} from './export-query';

/** What the cursor rule needs: the key the server signs its cursors with (export-query.ts cursorKey). */
type CursorContext = { cursorKey: Buffer };

/**
 * The ValidationPipe of the queries of the routes that read leads (these DTOs): 422 `invalid_query` naming every bad
 * parameter. A provider, so the cursor rule gets the key the server signs its cursors with.
 */
@Injectable()
export class LeadsQueryPipe extends ApiValidationPipe {
  constructor(@Inject(SERVER_CONFIG) config: ServerConfig) {
    super((errors) => new HttpException({ error: INVALID_QUERY, errors }, 422), {
      cursorKey: cursorKey(config.leads.secret, config.leads.ipSalt),
    } satisfies CursorContext);
  }
}

/** A rule of these DTOs: its name (the constraint a problem is listed under), its 422 words, its check. */
const Rule = (name: string, message: string, validate: (value: unknown, args: ValidationArguments) => boolean, context?: object) =>
  ValidateBy({ name, validator: { validate } }, { message, context });

const existingTime = (value: unknown) => typeof parseExportTime(value) === 'number';

/** `until` after `since`, once both are times that exist (each one's own rule says otherwise). */
function afterSince(value: unknown, args: ValidationArguments): boolean {
  const since = parseExportTime((args.object as { since?: unknown }).since);
  const until = parseExportTime(value);
  return typeof since !== 'number' || typeof until !== 'number' || since < until;
}

/**
 * A cursor exactly as this server gave it (signed with its key); nothing else, not another spelling of one. A cursor
 * of the order of changes (`updated_since`) only with `updated_since`, one of the order of numbers only without.
 */
function apiCursor(value: unknown, args: ValidationArguments): boolean {
  const context = validationContext<CursorContext>(args);
  if (!context) throw new Error('the cursor rule needs the cursor key (CursorContext)');
  const position = readCursor(value, context.cursorKey);
  const changes = (args.object as { updated_since?: unknown }).updated_since !== undefined;
  return position !== undefined && (position.updatedAt !== null) === changes;
}

/** Every parameter: an empty one (`status=`) counts as absent. */
const Param = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value)),
    IsOptional(),
  );

/** 1–EXPORT_LIMIT_MAX written in digits (`007` and `1e2` too are refused as today's rule says: digits only). */
const Limit = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      value === '' ? undefined : typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value,
    ),
    IsOptional(),
    IsInt({ message: QUERY_RULES.limit }),
    Min(1, { message: QUERY_RULES.limit }),
    Max(EXPORT_LIMIT_MAX, { message: QUERY_RULES.limit }),
  );
const Cursor = () => applyDecorators(Param(), Rule('apiCursor', QUERY_RULES.cursor, apiCursor));
const Since = () => applyDecorators(Param(), Rule('existingTime', QUERY_RULES.time, existingTime));
const Until = () =>
  applyDecorators(
    Param(),
    Rule('existingTime', QUERY_RULES.time, existingTime),
    Rule('afterSince', QUERY_RULES.afterSince, afterSince, CROSS_FIELD),
  );
const Status = () => applyDecorators(Param(), IsIn([...LEAD_STATUSES], { message: QUERY_RULES.status }));
const Source = () => applyDecorators(Param(), Matches(SOURCE_VALUE, { message: QUERY_RULES.source }));
const Search = () =>
  applyDecorators(
    Param(),
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
  @Since() since?: string;
  @Until() until?: string;
  @Status() status?: LeadStatus;
}

class ChangedParams {
  /** Leads whose state changed at or after this time, in the order of their changes. */
  @Since() updated_since?: string;
}

// IntersectionType keeps the rules in the order of its classes: the order a 422 names the parameters in.
/** `GET /leads/export.csv`. */
export class LeadsFilterQuery extends IntersectionType(CreatedParams, ChangedParams) {}
/** `GET /leads`. */
export class LeadsPageQuery extends IntersectionType(PageParams, LeadsFilterQuery) {}
/** `GET /inbox/api/leads.csv`. */
export class InboxFilterQuery extends IntersectionType(InboxParams, CreatedParams) {}
/** `GET /inbox/api/leads`. */
export class InboxPageQuery extends IntersectionType(PageParams, InboxFilterQuery) {}
/** `GET /inbox/api/charts`. */
export class InboxChartsQuery extends PickType(InboxParams, ['source'] as const) {}
