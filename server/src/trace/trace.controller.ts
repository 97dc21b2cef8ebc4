import { Controller, Get, Param, UseFilters, UseGuards } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { LeadsAccessGuard } from '../leads/leads-access.guard';
import { LeadsApiErrorFilter } from '../leads/leads-api.error';
import { readTrace } from './trace.repository';

/** `GET /leads/:request_id/trace` behind the same secret as `POST /leads`: the story of a request for integrators. */
@Controller('leads')
@UseFilters(LeadsApiErrorFilter)
export class TraceController {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  @Get(':key/trace')
  @UseGuards(LeadsAccessGuard)
  trace(@Param('key') key: string) {
    return readTrace(this.db, key);
  }
}
