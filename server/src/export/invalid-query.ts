import { HttpException } from '@nestjs/common';
import { ExportQueryError, INVALID_QUERY } from './export.service';

/**
 * Runs `work`, answering a bad query parameter (ExportQueryError) as `GET /leads` does: 422
 * `{ error: 'invalid_query', errors: { <param>: <why> } }`. For every door that takes the export's filters.
 */
export async function answeringInvalidQuery<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ExportQueryError) throw new HttpException({ error: INVALID_QUERY, errors: err.problems }, 422);
    throw err;
  }
}
