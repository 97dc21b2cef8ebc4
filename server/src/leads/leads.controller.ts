import { Controller, createParamDecorator, type ExecutionContext, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { API_ERRORS, IDEMPOTENCY_HEADER, MAX_BODY_BYTES, RATE_LIMIT_REASONS, type LeadAcceptedBody } from '@stickers/shared';
import { ApiPayloadTooLarge, ApiRateLimited, ApiRefusal, ApiSecretRefusals, jsonContent } from '../http/api-docs';
import { ApiError, rateLimited } from '../http/api-error';
import { callerAddress } from '../http/caller-address';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { readJsonObject } from '../http/json-body.reader';
import { SecretGuard } from '../access/secret.guard';
import { Metrics } from '../observability/metrics';
import { LeadsErrorFilter } from './leads-error.filter';
import { type CheckedSubmission, LEAD_REFUSED_SCHEMA, LeadAcceptedDto, LeadBodyPipe, LeadRequestDto } from './leads.dto';
import { LeadsService } from './leads.service';

/**
 * The body as a JSON object, read after the guards, with the Idempotency-Key header as its request_id when it has none
 * (absent, null or blank: what the field's rule calls missing).
 */
export const LeadBody = createParamDecorator(async (_data: unknown, ctx: ExecutionContext) => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const body = await readJsonObject(req);
  const key = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  const own = body.request_id;
  const missing = own === undefined || own === null || (typeof own === 'string' && own.trim() === '');
  if (missing && typeof key === 'string') body.request_id = key;
  return body;
});

/** `POST /leads`: the flood guard, SecretGuard, the body (LeadBodyPipe), the service; LeadsErrorFilter answers every refusal. */
@ApiTags('leads')
@ApiSecretRefusals()
@Controller('leads')
@Throttled('submit')
@UseGuards(CallerThrottleGuard, SecretGuard)
@UseFilters(LeadsErrorFilter)
export class LeadsController {
  constructor(
    private readonly leads: LeadsService,
    private readonly metrics: Metrics,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'submitLead', summary: 'Store a lead (idempotent by request_id)' })
  @ApiHeader({
    name: IDEMPOTENCY_HEADER,
    required: false,
    schema: { type: 'string', format: 'uuid' },
    description: 'The request_id, when the body has none',
  })
  @ApiBody({ type: LeadRequestDto, required: true, description: `A JSON object of at most ${MAX_BODY_BYTES} bytes` })
  @ApiResponse({
    status: 201,
    description: 'New lead stored',
    type: LeadAcceptedDto,
    example: {
      lead_number: 42,
      duplicate: false,
      repeat: false,
      telegram_link: 'https://t.me/stickers_bot?start=Zx3kq9R2mV8pL0aB7cT1wY5nH4jD6fE_',
    },
  })
  @ApiResponse({
    status: 200,
    description: 'Known request_id (duplicate), or a repeat of a lead from the last 24 h',
    type: LeadAcceptedDto,
    example: { lead_number: 42, duplicate: true, repeat: true, telegram_link: null },
  })
  @ApiPayloadTooLarge()
  @ApiResponse({ status: 422, description: 'Fields rejected, or the body is not a JSON object', ...jsonContent(LEAD_REFUSED_SCHEMA) })
  @ApiRateLimited('Too many requests from this caller (flood), wrong-secret lockout, per-visitor limit or hourly limit', RATE_LIMIT_REASONS)
  @ApiRefusal(503, 'The database cannot take the lead now (file replaced, locked too long, disk full); nothing was stored, retry later', [
    API_ERRORS.unavailable,
  ])
  async submit(@LeadBody(LeadBodyPipe) checked: CheckedSubmission, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.leads.submit(checked, callerAddress(req));
    if (outcome.kind === 'unavailable') throw new ApiError(503, { error: API_ERRORS.unavailable });
    if (outcome.kind === 'limited') throw rateLimited(outcome.why, outcome.retryAfterSec);
    this.metrics.submission(req, { result: outcome.kind });
    const answer: LeadAcceptedBody = {
      lead_number: outcome.lead_number,
      duplicate: outcome.kind !== 'created',
      repeat: outcome.kind === 'duplicate' ? outcome.repeat : outcome.kind === 'repeat',
      telegram_link: outcome.telegramLink,
    };
    res.status(outcome.kind === 'created' ? 201 : 200).json(answer);
  }
}
