import { Controller, Get, HttpCode, Post, Query, StreamableFile, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiInvalidQuery, ApiJsonBody, ApiRateLimited, ApiRefusal, INBOX_SCHEME } from '../http/api-docs';
import { Throttled } from '../http/caller-throttle';
import { JsonBody } from '../http/json-body.reader';
import { csvDownload } from '../export/csv.writer';
import { ApiCsvResponse, ApiQueryParameters } from '../export/export.dto';
import { InboxChartsQuery, InboxFilterQuery, InboxPageQuery, LeadsQueryPipe } from '../export/export-query';
import { CSV_COLUMNS } from '../export/export.service';
import {
  ApiLeadNumber,
  InboxChartsDto,
  InboxEraseBodyDto,
  InboxLeadAnswerDto,
  InboxLeadPageDto,
  InboxLeadsPageDto,
  InboxMeDto,
  InboxMessageAnswerDto,
  InboxMessageBodyDto,
  TEXT_RULE,
  InboxMessagesDto,
  InboxStatusBodyDto,
} from './inbox.dto';
import type { InboxViewer } from '../access/inbox-access.service';
import { LEAD_STATUSES } from '../domain/lead-status';
import { InboxAuthGuard, Viewer } from '../access/inbox-auth.guard';
import { NoStore } from '../access/behind-secret';
import { InboxService } from './inbox.service';
import { BODY_PIPE, LeadNumberParam } from '../http/validation';
import { InboxThrottleGuard } from './inbox-throttle.guard';

/** The Mini App's API (`/inbox/api/*`): throttled per Telegram user, then InboxAuthGuard, then the input checked by its DTO. */
@ApiTags('inbox')
@ApiSecurity(INBOX_SCHEME)
@ApiRefusal(401, 'Launch data missing, forged or too old', ['unauthorized'], {
  why: { type: 'string', enum: ['missing', 'invalid', 'expired'] },
})
@ApiRefusal(403, 'Neither a manager nor a member of a leads chat', ['forbidden'])
@ApiRefusal(
  503,
  'No bot token, or Telegram could not say who the user is; unavailable: the database cannot be used now',
  ['inbox_unavailable', 'unavailable'],
  {
    why: { type: 'string', enum: ['membership_unknown'] },
  },
)
@Controller('inbox/api')
@ApiRateLimited('Too many requests from this Telegram user, or from this address with launch data that does not check out', ['flood'])
@Throttled('inbox')
@UseGuards(NoStore, InboxThrottleGuard, InboxAuthGuard)
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
  @ApiQueryParameters('source', 'q', 'since', 'until', 'status', 'limit', 'cursor')
  @ApiOkResponse({ type: InboxLeadsPageDto })
  @ApiInvalidQuery()
  list(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxPageQuery) {
    return this.inbox.list(viewer, query);
  }

  @Get('leads.csv')
  @ApiOperation({
    operationId: 'inboxLeadsCsv',
    summary: 'The CSV of the current filter (the columns of GET /leads/export.csv)',
    description: `Columns: ${CSV_COLUMNS.join(', ')}. Personal values are empty where LEADS_CARD_PII=0 hides them.`,
  })
  @ApiQueryParameters('source', 'q', 'since', 'until', 'status')
  @ApiCsvResponse()
  @ApiRateLimited('Too many requests or exports (LEADS_THROTTLE_EXPORT) from this Telegram user', ['flood'])
  @Throttled('export')
  @ApiInvalidQuery()
  csv(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxFilterQuery): StreamableFile {
    return csvDownload(this.inbox.csv(viewer, query));
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
  @ApiQueryParameters('source')
  @ApiOkResponse({ type: InboxChartsDto })
  @ApiInvalidQuery()
  charts(@Viewer() viewer: InboxViewer, @Query(LeadsQueryPipe) query: InboxChartsQuery) {
    return this.inbox.charts(viewer, query);
  }

  @Get('leads/:number')
  @ApiOperation({
    operationId: 'inboxLead',
    summary: "A lead's page: its fields, repeats, status history, the trace's events, its card's link",
  })
  @ApiLeadNumber()
  @ApiOkResponse({ type: InboxLeadPageDto })
  lead(@Viewer() viewer: InboxViewer, @LeadNumberParam('number') leadNumber: number) {
    return this.inbox.lead(viewer, leadNumber);
  }

  @Post('leads/:number/status')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'inboxSetStatus',
    summary: 'Change the status as a card button does (the same rules, compare-and-set, history row, card rewritten)',
  })
  @ApiLeadNumber()
  @ApiJsonBody(InboxStatusBodyDto, 'An unknown status, or a change the card does not offer')
  @ApiOkResponse({ type: InboxLeadAnswerDto })
  @ApiRefusal(409, 'The status is no longer `expected`, or the lead is anonymised', ['conflict', 'anonymised'], {
    status: { type: 'string', enum: [...LEAD_STATUSES], description: 'The status now (conflict)' },
  })
  setStatus(@Viewer() viewer: InboxViewer, @LeadNumberParam('number') leadNumber: number, @JsonBody(BODY_PIPE) body: InboxStatusBodyDto) {
    return this.inbox.setStatus(viewer, leadNumber, body.status, body.expected);
  }

  @Post('leads/:number/erase')
  @HttpCode(200)
  @ApiOperation({ operationId: 'inboxErase', summary: "Erase a lead's personal data (managers only; cannot be undone)" })
  @ApiLeadNumber()
  @ApiJsonBody(InboxEraseBodyDto, 'Not confirmed, or not a JSON object')
  @ApiOkResponse({ type: InboxLeadAnswerDto })
  erase(@Viewer() viewer: InboxViewer, @LeadNumberParam('number') leadNumber: number, @JsonBody(BODY_PIPE) _body: InboxEraseBodyDto) {
    return this.inbox.erase(viewer, leadNumber);
  }

  @Get('leads/:number/messages')
  @ApiOperation({
    operationId: 'inboxMessages',
    summary: "The lead's conversation with its visitor in Telegram, oldest first, and the visitor the bot writes to",
  })
  @ApiLeadNumber()
  @ApiOkResponse({ type: InboxMessagesDto })
  messages(@Viewer() viewer: InboxViewer, @LeadNumberParam('number') leadNumber: number) {
    return this.inbox.messages(viewer, leadNumber);
  }

  @Post('leads/:number/messages')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'inboxSendMessage',
    summary: "Send the visitor a message through the bot (queued: the outbox sends it; its state follows in GET's answer)",
    description: 'Who may: whoever may change the status (LEADS_MANAGER_IDS when set).',
  })
  @ApiLeadNumber()
  @ApiJsonBody(InboxMessageBodyDto, `A text Telegram would not take: it must be ${TEXT_RULE}`)
  @ApiResponse({ status: 202, type: InboxMessageAnswerDto, description: 'Stored and queued' })
  @ApiRefusal(409, 'No visitor is bound to the lead', ['not_bound'])
  sendMessage(
    @Viewer() viewer: InboxViewer,
    @LeadNumberParam('number') leadNumber: number,
    @JsonBody(BODY_PIPE) body: InboxMessageBodyDto,
  ) {
    return this.inbox.postMessage(viewer, leadNumber, body.text);
  }
}
