import { Controller, Get, Param, UseFilters, UseGuards } from '@nestjs/common';
import { ApiErrorFilter } from '../http/api-error.filter';
import { SecretGuard } from '../http/secret.guard';
import { TraceService } from './trace.service';

/** `GET /leads/:request_id/trace` behind the same secret as `POST /leads`: the story of a request for integrators. */
@Controller('leads')
@UseFilters(ApiErrorFilter)
export class TraceController {
  constructor(private readonly traces: TraceService) {}

  @Get(':key/trace')
  @UseGuards(SecretGuard)
  trace(@Param('key') key: string) {
    return this.traces.read(key);
  }
}
