import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { jsonContent } from '../http/api-docs';
import { BehindSecret } from '../access/behind-secret';
import { TRACE_SCHEMA } from './trace.dto';
import { TraceService } from './trace.service';

/** `GET /leads/:request_id/trace` behind the same secret as `POST /leads`: the story of a request for integrators. */
@ApiTags('leads')
@BehindSecret()
@Controller('leads')
export class TraceController {
  constructor(private readonly traces: TraceService) {}

  @Get(':request_id/trace')
  @ApiOperation({ operationId: 'traceLead', summary: 'The story of a request: stored or not, card, repeats, status changes' })
  @ApiParam({ name: 'request_id', required: true, schema: { type: 'string' }, description: 'request_id or lead number' })
  @ApiOkResponse({
    description: 'The trace (found true or false); its times are milliseconds since the epoch',
    ...jsonContent(TRACE_SCHEMA),
  })
  trace(@Param('request_id') key: string) {
    return this.traces.read(key);
  }
}
