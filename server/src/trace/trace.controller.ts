import { Controller, Get, Param, UseFilters, UseGuards } from '@nestjs/common';
import { LeadsAccessGuard } from '../leads/leads-access.guard';
import { LeadsApiErrorFilter } from '../leads/leads-api.error';
import { TraceService } from './trace.service';

/** `GET /leads/:request_id/trace` behind the same secret as `POST /leads`: the story of a request for integrators. */
@Controller('leads')
@UseFilters(LeadsApiErrorFilter)
export class TraceController {
  constructor(private readonly traces: TraceService) {}

  @Get(':key/trace')
  @UseGuards(LeadsAccessGuard)
  trace(@Param('key') key: string) {
    return this.traces.read(key);
  }
}
