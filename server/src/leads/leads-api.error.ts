import { type ArgumentsHost, Catch, type ExceptionFilter, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Metrics } from '../observability/metrics';
import type { LeadErrorBody } from '@stickers/shared';
import { UploadAbortedError } from './json-body.reader';
import { SubmitProblemsLog } from './submit-problems.log';

/** An answer of docs/requirements.md §1.2 that is not a success: its status, its exact body, and any headers. */
export class LeadsApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: LeadErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${body.error}`);
  }
}

/**
 * Writes a LeadsApiError as the API's JSON body (docs/requirements.md §1.2), so no Nest-shaped error reaches a caller. An upload
 * the client aborted has nobody to answer: it is counted and logged (throttled, warn), not reported as a 500.
 */
@Catch(LeadsApiError, UploadAbortedError)
@Injectable()
export class LeadsApiErrorFilter implements ExceptionFilter {
  constructor(
    private readonly metrics: Metrics,
    private readonly problems: SubmitProblemsLog,
  ) {}

  catch(error: LeadsApiError | UploadAbortedError, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    if (error instanceof UploadAbortedError) {
      this.metrics.inc('leads_submissions_total', { result: 'aborted' });
      this.problems.uploadAborted();
      if (!res.headersSent) res.destroy();
      return;
    }
    if (req.method === 'POST') this.metrics.inc('leads_submissions_total', submissionLabels(error));
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.body);
  }
}

/** `leads_submissions_total` labels of a refused submission: rejected (with the reason) or throttled (with why). */
function submissionLabels(error: LeadsApiError): Record<string, string> {
  const body = error.body;
  if (body.error === 'rate_limited') return { result: 'throttled', why: body.why };
  if (body.error === 'invalid' || body.error === 'invalid_body' || body.error === 'payload_too_large')
    return { result: 'rejected', reason: body.error };
  return { result: body.error };
}
