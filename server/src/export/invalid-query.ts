import { HttpException, Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { ApiValidationPipe } from '../http/validation';
import { cursorKey, INVALID_QUERY } from './export-query';
import type { CursorContext } from './export-query.dto';
import { ExportQueryError } from './export.service';

/** A bad query parameter, answered as `GET /leads` does: 422 `{ error: 'invalid_query', errors: { <param>: <why> } }`. */
export const invalidQuery = (problems: Record<string, string>) => new HttpException({ error: INVALID_QUERY, errors: problems }, 422);

/**
 * The ValidationPipe of every route that reads leads (`@Query(LeadsQueryPipe)` with a DTO of export-query.dto.ts):
 * 422 `invalid_query` naming every bad parameter. A provider, so the cursor rule gets the key the server signs its
 * cursors with, derived from the configuration as ExportService derives it.
 */
@Injectable()
export class LeadsQueryPipe extends ApiValidationPipe {
  constructor(@Inject(SERVER_CONFIG) config: ServerConfig) {
    super(invalidQuery, { cursorKey: cursorKey(config.leads.secret, config.leads.ipSalt) } satisfies CursorContext);
  }
}

/**
 * Runs `work`, answering a bad query parameter it finds itself (ExportQueryError: the charts' own check of `source`)
 * as LeadsQueryPipe does.
 */
export async function answeringInvalidQuery<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ExportQueryError) throw invalidQuery(err.problems);
    throw err;
  }
}
