import { Controller, HttpCode, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { apiErrorSchema, ApiSecretRefusals, jsonContent } from '../http/api-docs';
import { ApiErrorFilter } from '../http/api-error.filter';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { JsonBody } from '../http/json-body.reader';
import { SecretGuard } from '../access/secret.guard';
import { BODY_PIPE, LEAD_NUMBER_PIPE } from '../http/validation';
import { CrmStatusService } from './crm-status.service';
import { CRM_STATUS_SCHEMAS, CrmStatusAnswerDto, CrmStatusBodyDto, LeadNumberParams } from './lead-status.dto';

/** `POST /leads/{lead_number}/status`: a CRM writes a status back, behind the shared secret, throttled first (`api`). */
@ApiTags('leads')
@ApiSecretRefusals({ throttled: true })
@Controller('leads')
@UseFilters(ApiErrorFilter)
@Throttled('api')
@UseGuards(CallerThrottleGuard, SecretGuard)
export class LeadStatusController {
  constructor(private readonly crm: CrmStatusService) {}

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
  setStatus(@Param(LEAD_NUMBER_PIPE) params: LeadNumberParams, @JsonBody(BODY_PIPE) body: CrmStatusBodyDto) {
    return this.crm.set(params.lead_number, body);
  }
}
