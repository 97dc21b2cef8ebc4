import { Controller, Headers, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { API_ERRORS, IDEMPOTENCY_HEADER, type LeadAcceptedBody } from '@stickers/shared';
import { ApiError } from '../http/api-error';
import { callerAddress } from '../http/caller-address';
import { JsonBody } from '../http/json-body.reader';
import { SecretGuard } from '../http/secret.guard';
import { Metrics } from '../observability/metrics';
import { LeadsErrorFilter } from './leads-error.filter';
import { LeadsService } from './leads.service';

/**
 * `POST /leads` (docs/requirements.md §1.2), a Nest route: the guard's checks (SecretGuard: module off, lockout,
 * secret), then the body (`@JsonBody()`, read only after the guard, 16 KB measured while reading), then the service;
 * an accepted lead answered here, every refusal thrown as an ApiError and answered (and counted) by LeadsErrorFilter.
 * Express's router matches the path as it does every route's: any case, one trailing slash, any query.
 */
@Controller('leads')
@UseGuards(SecretGuard)
@UseFilters(LeadsErrorFilter)
export class LeadsController {
  constructor(
    private readonly leads: LeadsService,
    private readonly metrics: Metrics,
  ) {}

  @Post()
  async submit(
    @JsonBody() body: Record<string, unknown>,
    @Headers(IDEMPOTENCY_HEADER) key: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const outcome = await this.leads.submit({
      body,
      callerIp: callerAddress(req),
      idempotencyKey: typeof key === 'string' ? key : undefined,
    });
    switch (outcome.kind) {
      case 'invalid':
        throw new ApiError(422, { error: API_ERRORS.invalid, errors: outcome.errors });
      case 'unavailable':
        throw new ApiError(503, { error: API_ERRORS.unavailable });
      case 'limited':
        throw new ApiError(429, { error: API_ERRORS.rateLimited, why: outcome.why }, { 'Retry-After': String(outcome.retryAfterSec) });
      case 'created':
        return this.accept(res, 201, outcome.kind, { lead_number: outcome.leadNumber, duplicate: false, repeat: false });
      case 'repeat':
        return this.accept(res, 200, outcome.kind, { lead_number: outcome.leadNumber, duplicate: true, repeat: true });
      case 'duplicate':
        return this.accept(res, 200, outcome.kind, { lead_number: outcome.leadNumber, duplicate: true, repeat: outcome.repeat });
    }
  }

  /**
   * Written on the response (`@Res()`): the status depends on the outcome (201 or 200), and a route's returned value
   * always gets the route's one status.
   */
  private accept(res: Response, status: number, result: 'created' | 'repeat' | 'duplicate', body: LeadAcceptedBody): void {
    this.metrics.inc('leads_submissions_total', { result });
    res.status(status).json(body);
  }
}
