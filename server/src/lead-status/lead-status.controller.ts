import { Controller, HttpCode, Logger, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiJsonBody, ApiRefusal } from '../http/api-docs';
import { JsonBody } from '../http/json-body.reader';
import { BehindSecret } from '../access/behind-secret';
import { BODY_PIPE, LeadNumberParam, notFound } from '../http/validation';
import { ExportService } from '../export/export.service';
import { LeadStatusService, statusRefusal } from './lead-status.service';
import { CrmStatusAnswerDto, CrmStatusBodyDto } from './lead-status.dto';
import { LEAD_STATUSES } from '../domain/lead-status';

/** `POST /leads/{lead_number}/status`: a CRM writes a status back, behind the shared secret, throttled first (`api`). */
@ApiTags('leads')
@BehindSecret()
@Controller('leads')
export class LeadStatusController {
  private readonly logger = new Logger('LeadStatus');

  constructor(
    private readonly statuses: LeadStatusService,
    private readonly exports: ExportService,
  ) {}

  @Post(':lead_number/status')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'setLeadStatus',
    summary: "Change a lead's status from a CRM, by the card buttons' rules",
    description:
      'The same changes the card offers, a compare-and-set against `from`, a history row naming `by`, the card ' +
      'rewritten, and a `lead.status_changed` webhook.',
  })
  @ApiParam({ name: 'lead_number', schema: { type: 'integer', minimum: 1 } })
  @ApiJsonBody(CrmStatusBodyDto, 'A bad body, or a change the card does not offer')
  @ApiOkResponse({ type: CrmStatusAnswerDto })
  @ApiRefusal(404, 'No such lead (or the leads module switched off)', ['not_found'])
  @ApiRefusal(409, 'The status is no longer `from` (`status`: the one now), or the lead is anonymised', ['conflict', 'anonymised'], {
    status: { type: 'string', enum: [...LEAD_STATUSES], description: 'The status now (conflict)' },
  })
  async setStatus(@LeadNumberParam('lead_number') leadId: number, @JsonBody(BODY_PIPE) body: CrmStatusBodyDto) {
    const outcome = await this.statuses.set({ leadId, expected: body.from, to: body.to, by: { telegramUserId: null, name: body.by } });
    // Only a Telegram user is checked against LEADS_MANAGER_IDS: never an integrator (never `not_manager`).
    if (outcome.kind !== 'changed') throw statusRefusal(outcome, 'to', body.from, body.to);
    if (outcome.card !== 'shown')
      this.logger.log({ msg: 'crm status change: card rewrite later', lead_number: leadId, card: outcome.card });
    const lead = await this.exports.lead(leadId);
    if (!lead) throw notFound();
    return { lead };
  }
}
