import { Controller, HttpCode, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { API_ERRORS, IDEMPOTENCY_HEADER, type LeadAcceptedBody } from '@stickers/shared';
import { readJsonObject } from './json-body.reader';
import { LeadsApiError, LeadsApiErrorFilter } from './leads-api.error';
import { LeadsAccessGuard, callerAddress } from './leads-access.guard';
import { LeadsService } from './leads.service';
import { Metrics } from '../observability/metrics';

/** `POST /leads` (docs/requirements.md §1.2): read the body, ask the service, map the outcome to status and body. */
@Controller('leads')
@UseFilters(LeadsApiErrorFilter)
export class LeadsController {
  constructor(
    private readonly leads: LeadsService,
    private readonly metrics: Metrics,
  ) {}

  @Post()
  @HttpCode(200)
  @UseGuards(LeadsAccessGuard)
  async submit(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await readJsonObject(req);
    const key = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
    const outcome = await this.leads.submit({
      body,
      callerIp: callerAddress(req),
      idempotencyKey: typeof key === 'string' ? key : undefined,
    });
    if (outcome.kind === 'created' || outcome.kind === 'repeat' || outcome.kind === 'duplicate') {
      this.metrics.inc('leads_submissions_total', { result: outcome.kind });
    }
    switch (outcome.kind) {
      case 'invalid':
        throw new LeadsApiError(422, { error: API_ERRORS.invalid, errors: outcome.errors });
      case 'unavailable':
        throw new LeadsApiError(503, { error: API_ERRORS.unavailable });
      case 'limited':
        throw new LeadsApiError(429, { error: API_ERRORS.rateLimited, why: outcome.why }, { 'Retry-After': String(outcome.retryAfterSec) });
      case 'created':
        res.status(201).json({ lead_number: outcome.leadNumber, duplicate: false, repeat: false } satisfies LeadAcceptedBody);
        return;
      case 'repeat':
        res.status(200).json({ lead_number: outcome.leadNumber, duplicate: true, repeat: true } satisfies LeadAcceptedBody);
        return;
      case 'duplicate':
        res.status(200).json({ lead_number: outcome.leadNumber, duplicate: true, repeat: outcome.repeat } satisfies LeadAcceptedBody);
        return;
    }
  }
}
