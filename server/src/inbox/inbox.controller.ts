import { Readable } from 'node:stream';
import { Controller, Get, HttpCode, Param, Post, Query, StreamableFile, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiRateLimited, jsonContent } from '../http/api-docs';
import { Throttled } from '../http/caller-throttle';
import { ApiErrorFilter } from '../http/api-error.filter';
import { JsonBody } from '../http/json-body.reader';
import { ApiPageQuery, INVALID_QUERY_SCHEMA, ApiExportFilters, LeadsPageDto } from '../export/export.dto';
import { InboxChartsQuery, InboxFilterQuery, InboxPageQuery } from '../export/export-query.dto';
import { CSV_COLUMNS } from '../export/export.service';
import { LeadsQueryPipe } from '../export/invalid-query';
import {
  ApiInboxFilters,
  INBOX_SCHEME,
  INBOX_REFUSAL_SCHEMAS,
  InboxChartsDto,
  InboxEraseBodyDto,
  InboxLeadAnswerDto,
  InboxLeadPageDto,
  InboxLeadParams,
  InboxMeDto,
  InboxStatusBodyDto,
} from './inbox.dto';
import type { InboxViewer } from '../access/inbox-access.service';
import { InboxAuthGuard, Viewer } from '../access/inbox-auth.guard';
import { InboxMessageAnswerDto, InboxMessageBodyDto, InboxMessagesDto } from './inbox-messages.dto';
import { InboxService } from './inbox.service';
import { BODY_PIPE, LEAD_NUMBER_PIPE } from '../http/validation';
import { InboxThrottleGuard } from './inbox-throttle.guard';

/** A lead a viewer may not see is answered as one that does not exist. */
const NOT_FOUND_DESCRIPTION = "No such lead, or none of the viewer's chats has it (LEADS_ROUTES)";

/**
 * The inbox's API (`/inbox/api/*`), for the Mini App at `/inbox`: every route throttled per Telegram user first
 * (InboxThrottleGuard: `inbox`, and `export` on the CSV), then behind InboxAuthGuard (the launch data, then who the user is), every answer `Cache-Control: no-store` (InboxModule's middleware). The input is checked by its DTO's ValidationPipe
 * after the guards: the queries as `GET /leads`'s (LeadsQueryPipe), `:number` (404) and the bodies (422 `invalid_body`)
 * by http/validation.ts. Thin: InboxService decides.
 */
@ApiTags('inbox')
@ApiSecurity(INBOX_SCHEME)
@ApiResponse({ status: 401, description: 'Launch data missing, forged or too old', ...jsonContent(INBOX_REFUSAL_SCHEMAS.unauthorized) })
@ApiResponse({
  status: 403,
  description: 'Neither a manager nor a member of a leads chat',
  ...jsonContent(INBOX_REFUSAL_SCHEMAS.forbidden),
})
@ApiResponse({
  status: 503,
  description: 'No bot token, or Telegram could not say who the user is',
  ...jsonContent(INBOX_REFUSAL_SCHEMAS.unavailable),
})
@Controller('inbox/api')
@UseFilters(ApiErrorFilter)
@ApiRateLimited('Too many requests from this Telegram user, or from this address with launch data that does not check out', ['flood'])
@Throttled('inbox')
@UseGuards(InboxThrottleGuard, InboxAuthGuard)
export class InboxController {
  constructor(private readonly inbox: InboxService) {}

  @Get('me')
  @ApiOperation({
    operationId: 'inboxMe',
    summary: 'Who is asking: the Telegram user, whether a manager, the locale, whether cards show personal data',
  })
  @ApiOkResponse({ type: InboxMeDto })
  me(@Viewer() viewer: InboxViewer) {
    return this.inbox.me(viewer);
  }

  @Get('leads')
  @ApiOperation({
    operationId: 'inboxListLeads',
    summary: 'Leads, newest first, a page at a time: the filters and paging of GET /leads, plus source and q',
    description:
      'Only the leads of the chats the viewer is a member of (every lead for LEADS_MANAGER_IDS). Personal values are ' +
      'null where LEADS_CARD_PII=0 hides them on the card, and q then matches only the lead number and the source.',
  })
  @ApiPageQuery()
  @ApiInboxFilters()
  @ApiOkResponse({ type: LeadsPageDto })
  @ApiResponse({ status: 422, description: 'A bad query parameter', ...jsonContent(INVALID_QUERY_SCHEMA) })
  list(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxPageQuery) {
    return this.inbox.list(viewer, query);
  }

  @Get('leads.csv')
  @ApiOperation({
    operationId: 'inboxLeadsCsv',
    summary: 'The CSV of the current filter (the columns of GET /leads/export.csv)',
    description: `Columns: ${CSV_COLUMNS.join(', ')}. Personal values are empty where LEADS_CARD_PII=0 hides them.`,
  })
  @ApiExportFilters()
  @ApiInboxFilters()
  @ApiOkResponse({ description: 'The CSV', content: { 'text/csv': { schema: { type: 'string' } } } })
  @ApiRateLimited('Too many requests or exports (LEADS_THROTTLE_EXPORT) from this Telegram user', ['flood'])
  @Throttled('export')
  @ApiResponse({ status: 422, description: 'A bad query parameter', ...jsonContent(INVALID_QUERY_SCHEMA) })
  csv(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxFilterQuery): StreamableFile {
    const rows = this.inbox.csv(viewer, query);
    return new StreamableFile(Readable.from(rows), { type: 'text/csv; charset=utf-8', disposition: 'attachment; filename="leads.csv"' });
  }

  @Get('charts')
  @ApiOperation({
    operationId: 'inboxCharts',
    summary: 'The last 30 days (LEADS_TIMEZONE, today included): leads per day by source, the funnel, the median first change',
    description:
      'The funnel counts the leads created in the 30 days by the status they have now; the median is the time from a ' +
      "lead's creation to its first status change, over the 30 days' leads ever changed (null: none). The SVGs draw " +
      'text in currentColor and bars with the classes `bar s0`…`s5` (per_day order, or the statuses in the funnel).',
  })
  @ApiQuery({
    name: 'source',
    required: false,
    schema: { type: 'string' },
    description: "Only the leads of this landing's source (source.landing); `none`: leads without a source",
  })
  @ApiOkResponse({ type: InboxChartsDto })
  @ApiResponse({ status: 422, description: 'A bad query parameter', ...jsonContent(INVALID_QUERY_SCHEMA) })
  charts(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxChartsQuery) {
    return this.inbox.charts(viewer, query);
  }

  @Get('leads/:number')
  @ApiOperation({
    operationId: 'inboxLead',
    summary: "A lead's page: its fields, repeats, status history, the trace's events, its card's link",
  })
  @ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: InboxLeadPageDto })
  @ApiResponse({ status: 404, description: NOT_FOUND_DESCRIPTION, ...jsonContent(INBOX_REFUSAL_SCHEMAS.notFound) })
  lead(@Viewer() viewer: InboxViewer, @Param(LEAD_NUMBER_PIPE) params: InboxLeadParams) {
    return this.inbox.lead(viewer, params.number);
  }

  @Post('leads/:number/status')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'inboxSetStatus',
    summary: 'Change the status as a card button does (the same rules, compare-and-set, history row, card rewritten)',
  })
  @ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } })
  @ApiBody({ type: InboxStatusBodyDto })
  @ApiOkResponse({ type: InboxLeadAnswerDto })
  @ApiResponse({ status: 404, description: NOT_FOUND_DESCRIPTION, ...jsonContent(INBOX_REFUSAL_SCHEMAS.notFound) })
  @ApiResponse({
    status: 409,
    description: 'The status is no longer `expected`, or the lead is anonymised',
    ...jsonContent(INBOX_REFUSAL_SCHEMAS.conflict),
  })
  @ApiResponse({ status: 413, description: 'A body over 16 KB', ...jsonContent(INBOX_REFUSAL_SCHEMAS.tooLarge) })
  @ApiResponse({
    status: 422,
    description: 'An unknown status, or a change the card does not offer',
    ...jsonContent(INBOX_REFUSAL_SCHEMAS.invalidBody),
  })
  setStatus(
    @Viewer() viewer: InboxViewer,
    @Param(LEAD_NUMBER_PIPE) params: InboxLeadParams,
    @JsonBody(BODY_PIPE) body: InboxStatusBodyDto,
  ) {
    return this.inbox.setStatus(viewer, params.number, body);
  }

  @Post('leads/:number/erase')
  @HttpCode(200)
  @ApiOperation({ operationId: 'inboxErase', summary: "Erase a lead's personal data (managers only; cannot be undone)" })
  @ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } })
  @ApiBody({ type: InboxEraseBodyDto })
  @ApiOkResponse({ type: InboxLeadAnswerDto })
  @ApiResponse({ status: 404, description: NOT_FOUND_DESCRIPTION, ...jsonContent(INBOX_REFUSAL_SCHEMAS.notFound) })
  @ApiResponse({ status: 413, description: 'A body over 16 KB', ...jsonContent(INBOX_REFUSAL_SCHEMAS.tooLarge) })
  @ApiResponse({ status: 422, description: 'Not confirmed, or not a JSON object', ...jsonContent(INBOX_REFUSAL_SCHEMAS.invalidBody) })
  // The body's DTO (InboxEraseBodyDto) only lets `{"confirm": true}` through: the handler needs nothing of it.
  erase(@Viewer() viewer: InboxViewer, @Param(LEAD_NUMBER_PIPE) params: InboxLeadParams, @JsonBody(BODY_PIPE) _body: InboxEraseBodyDto) {
    return this.inbox.erase(viewer, params.number);
  }

  @Get('leads/:number/messages')
  @ApiOperation({
    operationId: 'inboxMessages',
    summary: "The lead's conversation with its visitor in Telegram, oldest first, and the visitor the bot writes to",
  })
  @ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: InboxMessagesDto })
  @ApiResponse({ status: 404, description: NOT_FOUND_DESCRIPTION, ...jsonContent(INBOX_REFUSAL_SCHEMAS.notFound) })
  messages(@Viewer() viewer: InboxViewer, @Param(LEAD_NUMBER_PIPE) params: InboxLeadParams) {
    return this.inbox.messages(viewer, params.number);
  }

  @Post('leads/:number/messages')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'inboxSendMessage',
    summary: "Send the visitor a message through the bot (queued: the outbox sends it; its state follows in GET's answer)",
    description: 'Who may: whoever may change the status (LEADS_MANAGER_IDS when set).',
  })
  @ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } })
  @ApiBody({ type: InboxMessageBodyDto })
  @ApiResponse({ status: 202, type: InboxMessageAnswerDto, description: 'Stored and queued' })
  @ApiResponse({ status: 404, description: NOT_FOUND_DESCRIPTION, ...jsonContent(INBOX_REFUSAL_SCHEMAS.notFound) })
  @ApiResponse({ status: 409, description: 'No visitor is bound to the lead', ...jsonContent(INBOX_REFUSAL_SCHEMAS.notBound) })
  @ApiResponse({ status: 413, description: 'A body over 16 KB', ...jsonContent(INBOX_REFUSAL_SCHEMAS.tooLarge) })
  @ApiResponse({ status: 422, description: 'No text, or over 4096 characters', ...jsonContent(INBOX_REFUSAL_SCHEMAS.invalidBody) })
  sendMessage(
    @Viewer() viewer: InboxViewer,
    @Param(LEAD_NUMBER_PIPE) params: InboxLeadParams,
    @JsonBody(BODY_PIPE) body: InboxMessageBodyDto,
  ) {
    return this.inbox.postMessage(viewer, params.number, body.text);
  }
}
