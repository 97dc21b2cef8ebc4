import { Controller, Get, Query, StreamableFile } from '@nestjs/common';
import { ApiExtension, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiInvalidQuery, ApiRateLimited, ApiRefusal } from '../http/api-docs';
import { LeadNumberParam, notFound } from '../http/validation';
import { Throttled } from '../http/caller-throttle';
import { BehindSecret } from '../access/behind-secret';
import { csvDownload } from './csv.writer';
import { ApiCsvResponse, ApiQueryParameters, LeadAnswerDto, LeadsPageDto } from './export.dto';
import { CSV_COLUMNS, ExportService } from './export.service';
import { LeadsFilterQuery, LeadsPageQuery, LeadsQueryPipe } from './export-query';

/** `GET /leads`, its CSV and one lead behind `POST /leads`'s secret: the caller throttled first, the query checked last. */
@ApiTags('leads')
@BehindSecret()
@Controller('leads')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get()
  @ApiOperation({
    operationId: 'listLeads',
    summary: 'Leads, newest first by number (with updated_since: oldest change first), a page at a time',
    description:
      'Page with next_cursor until it is null, with the same filters. By number: a lead stored after the first page is ' +
      'newer than every page read, so paging never repeats or skips one. With updated_since: a lead that changes while ' +
      'you page comes again with its new state. Personal fields are null once the lead is anonymised.',
  })
  @ApiQueryParameters('since', 'until', 'status', 'updated_since', 'limit', 'cursor')
  @ApiOkResponse({ description: 'A page', type: LeadsPageDto })
  @ApiInvalidQuery()
  list(@Query(LeadsQueryPipe) query: LeadsPageQuery) {
    return this.exports.page(query);
  }

  @Get('export.csv')
  @ApiOperation({
    operationId: 'exportLeadsCsv',
    summary: 'Every lead matching the filters as CSV, newest first by number (with updated_since: oldest change first), streamed',
    description:
      'UTF-8 with a BOM (Excel opens Cyrillic), CRLF rows, RFC 4180 quoting. Columns: ' +
      `${CSV_COLUMNS.join(', ')} (local: LEADS_TIMEZONE). A cell starting with =, +, -, @ (or a tab or CR) gets a leading ' ` +
      'so a spreadsheet shows it as text (phones and usernames too). Anonymised fields are empty.',
  })
  @ApiQueryParameters('since', 'until', 'status', 'updated_since')
  @ApiExtension('x-telegram-command', {
    command: '/stickers_export [days]',
    description:
      'In the admin chat only, for managers (LEADS_MANAGER_IDS, else administrators of the leads group): the same CSV ' +
      'of the leads created in the last days (default 7, at most 365), sent there as a document.',
  })
  @ApiCsvResponse()
  @ApiInvalidQuery()
  @ApiRateLimited(
    'Too many requests or exports from this caller (flood: LEADS_THROTTLE_API, LEADS_THROTTLE_EXPORT), or the wrong-secret lockout',
    ['flood', 'secret'],
  )
  @Throttled('export')
  csv(@Query(LeadsQueryPipe) query: LeadsFilterQuery): StreamableFile {
    return csvDownload(this.exports.csv(query));
  }

  /** After the CSV: Express matches routes in this order, and `export.csv` is no lead number. */
  @Get(':lead_number')
  @ApiOperation({
    operationId: 'getLead',
    summary: 'One lead by its number, as GET /leads lists it',
    description: 'Its state now, e.g. after a webhook that was missed. Personal fields are null once the lead is anonymised.',
  })
  @ApiParam({ name: 'lead_number', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: LeadAnswerDto })
  @ApiRefusal(404, 'No such lead (or the leads module switched off)', ['not_found'])
  async one(@LeadNumberParam('lead_number') leadNumber: number): Promise<LeadAnswerDto> {
    const lead = await this.exports.lead(leadNumber);
    if (!lead) throw notFound();
    return { lead };
  }
}
