import { type ArgumentsHost, Catch, type ExceptionFilter, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { LeadErrorBody } from '@stickers/shared';
import { ApiError, UploadAbortedError } from '../http/api-error';
import { answerApiError } from '../http/api-error.filter';
import { Metrics } from '../observability/metrics';
import { SubmitProblemsLog } from './submit-problems.log';

const REJECTIONS = new Set(['invalid', 'invalid_body', 'payload_too_large']);

/** `leads_submissions_total` labels of a refused submission: rejected (with the reason) or throttled (with why). */
function submissionLabels(body: LeadErrorBody): Record<string, string> {
  if (body.error === 'rate_limited') return { result: 'throttled', why: body.why };
  return REJECTIONS.has(body.error) ? { result: 'rejected', reason: body.error } : { result: body.error };
}

/** Every refusal of `POST /leads` counted in `leads_submissions_total` and answered; an aborted upload logged, not a 500. */
@Catch(ApiError, UploadAbortedError)
@Injectable()
export class LeadsErrorFilter implements ExceptionFilter {
  constructor(
    private readonly metrics: Metrics,
    private readonly problems: SubmitProblemsLog,
  ) {}

  catch(error: ApiError | UploadAbortedError, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    if (error instanceof UploadAbortedError) {
      this.metrics.submission(request, { result: 'aborted' });
      this.problems.aborted.note();
    } else {
      this.metrics.submission(request, submissionLabels(error.body));
    }
    answerApiError(host.switchToHttp().getResponse<Response>(), error);
  }
}
