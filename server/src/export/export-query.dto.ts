import { applyDecorators, HttpException, Inject, Injectable } from '@nestjs/common';
import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
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

/**
 * The queries of the routes that read leads (`GET /leads`, its CSV, the inbox's list, CSV and charts) as
 * class-validator DTOs, checked by LeadsQueryPipe. Each class lists its parameters in the order a 422 names them. What
 * a decorator cannot say is a constraint here: a time that exists, `until` after `since`, a cursor this API gave.
 */

/** What the cursor rule needs: the key the server signs its cursors with (export-query.ts cursorKey). */
export interface CursorContext {
  cursorKey: Buffer;
}

/**
 * The ValidationPipe of every route that reads leads (`@Query(LeadsQueryPipe)`): 422 `invalid_query` naming every bad
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

@ValidatorConstraint({ name: 'existingTime' })
export class ExistingTime implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof parseExportTime(value) === 'number';
  }
}

/** `until` after `since`, once both are times that exist (each one's own rule says otherwise). */
@ValidatorConstraint({ name: 'afterSince' })
export class AfterSince implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const since = parseExportTime((args.object as { since?: unknown }).since);
    const until = parseExportTime(value);
    return typeof since !== 'number' || typeof until !== 'number' || since < until;
  }
}

/**
 * A cursor exactly as this server gave it (signed with its key); nothing else, not another spelling of one. A cursor
 * of the order of changes (`updated_since`) only with `updated_since`, one of the order of numbers only without.
 */
@ValidatorConstraint({ name: 'apiCursor' })
export class ApiCursor implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const context = validationContext<CursorContext>(args);
    if (!context) throw new Error('the cursor rule needs the cursor key (CursorContext)');
    const position = readCursor(value, context.cursorKey);
    const changes = (args.object as { updated_since?: unknown }).updated_since !== undefined;
    return position !== undefined && (position.updatedAt !== null) === changes;
  }
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
const Cursor = () => applyDecorators(Param(), Validate(ApiCursor, { message: QUERY_RULES.cursor }));
const Since = () => applyDecorators(Param(), Validate(ExistingTime, { message: QUERY_RULES.time }));
const Until = () =>
  applyDecorators(
    Param(),
    Validate(ExistingTime, { message: QUERY_RULES.time }),
    Validate(AfterSince, { message: QUERY_RULES.afterSince, context: CROSS_FIELD }),
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

/** `GET /leads/export.csv`: the filters. */
export class LeadsFilterQuery {
  @Since() since?: string;
  @Until() until?: string;
  @Status() status?: LeadStatus;
  /** Leads whose state changed at or after this time, in the order of their changes. */
  @Since() updated_since?: string;
}

/** `GET /leads`: the page, then the filters. */
export class LeadsPageQuery {
  @Limit() limit?: number;
  @Cursor() cursor?: string;
  @Since() since?: string;
  @Until() until?: string;
  @Status() status?: LeadStatus;
  @Since() updated_since?: string;
}

/** `GET /inbox/api/leads.csv`: the inbox's filters (source, q), then those of `GET /leads`. */
export class InboxFilterQuery {
  @Source() source?: string;
  @Search() q?: string;
  @Since() since?: string;
  @Until() until?: string;
  @Status() status?: LeadStatus;
}

/** `GET /inbox/api/leads`: the page, the inbox's filters, those of `GET /leads`. */
export class InboxPageQuery {
  @Limit() limit?: number;
  @Cursor() cursor?: string;
  @Source() source?: string;
  @Search() q?: string;
  @Since() since?: string;
  @Until() until?: string;
  @Status() status?: LeadStatus;
}

/** `GET /inbox/api/charts`: the source alone. */
export class InboxChartsQuery {
  @Source() source?: string;
}
