import { type ArgumentsHost, Catch, type ExceptionFilter, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Metrics } from '../observability/metrics';
import type { LeadErrorBody } from '@stickers/shared';

/** An answer of CONTRACT section 3 that is not a success: its status, its exact body, and any headers. */
export class LeadsApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: LeadErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${body.error}`);
  }
}

/** Writes a LeadsApiError as the contract's JSON body, so no Nest-shaped error ever reaches an integrator. */
@Catch(LeadsApiError)
@Injectable()
export class LeadsApiErrorFilter implements ExceptionFilter {
  constructor(private readonly metrics: Metrics) {}

  catch(error: LeadsApiError, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    if (req.method === 'POST') this.metrics.inc('leads_submissions_total', submissionLabels(error));
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.body);
  }
}

/** `leads_submissions_total` labels of a refused submission: rejected (with the reason) or throttled (with why). */
function submissionLabels(error: LeadsApiError): Record<string, string> {
  const body = error.body;
  if (body.error === 'rate_limited') return { result: 'throttled', why: body.why };
  if (body.error === 'invalid' || body.error === 'invalid_body' || body.error === 'payload_too_large') return { result: 'rejected', reason: body.error };
  return { result: body.error };
}
