import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiInvalidQuery, ApiRefusal } from '../http/api-docs';
import { BehindSecret } from '../access/behind-secret';
import { ApiValidationPipe, notFound } from '../http/validation';
import { LeadsQueryPipe } from '../export/export-query';
import { ApiQueryParameters, queryTime } from '../export/export.dto';
import { EVENT_ID, WebhookEventParams, WebhookEventsPageDto, WebhookEventsQuery, WebhookRedeliveryDto } from './webhook-events.dto';
import { WebhookEventsService } from './webhook-events.service';

/** Behind the shared secret of `POST /leads`, each caller throttled first (`api`). */
@ApiTags('webhooks')
@BehindSecret()
@Controller('webhooks/events')
export class WebhookEventsController {
  constructor(private readonly events: WebhookEventsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listWebhookEvents',
    summary: 'Recent webhook events, newest first, with the state of their delivery to each endpoint',
  })
  @ApiQuery({ name: 'since', required: false, ...queryTime('Events that happened at or after') })
  @ApiQuery({
    name: 'before',
    required: false,
    schema: { type: 'string', pattern: EVENT_ID.source },
    description: "An event's id (the last of a page): the events older than it, to page back",
  })
  @ApiQueryParameters('limit')
  @ApiOkResponse({ type: WebhookEventsPageDto })
  @ApiInvalidQuery()
  list(@Query(LeadsQueryPipe) query: WebhookEventsQuery) {
    return this.events.list(query);
  }

  @Post(':id/redeliver')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'redeliverWebhookEvent',
    summary:
      'Send an event again to each endpoint it went to that is still configured (the same id, a fresh signature), as `webhooks replay` does',
  })
  @ApiParam({ name: 'id', schema: { type: 'string', pattern: EVENT_ID.source } })
  @ApiAcceptedResponse({ type: WebhookRedeliveryDto })
  @ApiRefusal(404, 'No such event (or the leads module switched off)', ['not_found'])
  redeliver(@Param(new ApiValidationPipe(notFound)) params: WebhookEventParams) {
    return this.events.redeliver(params.id);
  }
}
