import { Readable } from 'node:stream';
import { Controller, Get, HttpException, Query, StreamableFile, UseFilters, UseGuards } from '@nestjs/common';
import { ApiErrorFilter } from '../http/api-error.filter';
import { SecretGuard } from '../http/secret.guard';
import { ExportQueryError, ExportService } from './export.service';

/** A bad query parameter → 422 `{ error: 'invalid_query', errors: { <param>: <why> } }`. */
async function checked<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ExportQueryError) throw new HttpException({ error: 'invalid_query', errors: err.problems }, 422);
    throw err;
  }
}

/** Issue 14: `GET /leads` and `GET /leads/export.csv`, behind the same secret as `POST /leads`. */
@Controller('leads')
@UseFilters(ApiErrorFilter)
@UseGuards(SecretGuard)
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get()
  list(@Query() query: Record<string, unknown>) {
    return checked(() => this.exports.page(query));
  }

  @Get('export.csv')
  async csv(@Query() query: Record<string, unknown>): Promise<StreamableFile> {
    const filter = await checked(() => this.exports.filter(query));
    return new StreamableFile(Readable.from(this.exports.csv(filter)), {
      type: 'text/csv; charset=utf-8',
      disposition: 'attachment; filename="leads.csv"',
    });
  }
}
