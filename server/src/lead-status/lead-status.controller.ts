import { Controller, HttpCode, HttpException, Logger, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { apiErrorSchema, ApiSecretRefusals, jsonContent } from '../http/api-docs';
import { ApiErrorFilter } from '../http/api-error.filter';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { JsonBody } from '../http/json-body.reader';
import { SecretGuard } from '../access/secret.guard';
import { BODY_PIPE, invalidBody, LeadNumberParam, notFound } from '../http/validation';
import type { ExportedLead } from '../export/export.dto';
import { ExportService } from '../export/export.service';
import { LeadStatusService } from './lead-status.service';
import { CRM_STATUS_SCHEMAS, CrmStatusAnswerDto, CrmStatusBodyDto } from './lead-status.dto';

const conflict = (body: Record<string, unknown>) => new HttpException(body, 409);

/** `POST /leads/{lead_number}/status`: a CRM writes a status back, behind the shared secret, throttled first (`api`). */
@ApiTags('leads')
@ApiSecretRefusals({ throttled: true })
@Controller('leads')
@UseFilters(ApiErrorFilter)
@Throttled('api')
@UseGuards(CallerThrottleGuard, SecretGuard)
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
  @ApiBody({ type: CrmStatusBodyDto })
  @ApiOkResponse({ type: CrmStatusAnswerDto })
  @ApiResponse({ status: 404, description: 'No such lead (or the leads module switched off)', ...jsonContent(CRM_STATUS_SCHEMAS.notFound) })
  @ApiResponse({
    status: 409,
    description: 'The status is no longer `from` (`status`: the one now), or the lead is anonymised',
    ...jsonContent(CRM_STATUS_SCHEMAS.conflict),
  })
  @ApiResponse({ status: 413, description: 'A body over 16 KB', ...jsonContent(apiErrorSchema(['payload_too_large'])) })
  @ApiResponse({
    status: 422,
    description: 'A bad body, or a change the card does not offer',
    ...jsonContent(CRM_STATUS_SCHEMAS.invalidBody),
  })
  async setStatus(
    @LeadNumberParam('lead_number') leadId: number,
    @JsonBody(BODY_PIPE) body: CrmStatusBodyDto,
  ): Promise<{ lead: ExportedLead }> {
    const outcome = await this.statuses.set({ leadId, expected: body.from, to: body.to, by: { telegramUserId: null, name: body.by } });
    switch (outcome.kind) {
      // Only a Telegram user is checked against LEADS_MANAGER_IDS: never an integrator.
      case 'not_manager':
      case 'unknown_lead':
        throw notFound();
      case 'anonymised':
        throw conflict({ error: 'anonymised' });
      case 'conflict':
        throw conflict({ error: 'conflict', status: outcome.status });
      case 'not_allowed':
        throw invalidBody({ to: `cannot change from ${body.from} to ${body.to}; allowed: ${outcome.allowed.join(', ')}` });
      case 'changed': {
        if (outcome.card !== 'shown')
          this.logger.log({ msg: 'crm status change: card rewrite later', lead_number: leadId, card: outcome.card });
        const lead = await this.exports.lead(leadId);
        if (!lead) throw notFound();
        return { lead };
      }
    }
  }
}
