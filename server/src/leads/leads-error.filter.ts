import { type ArgumentsHost, Catch, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { API_ERRORS, type LeadErrorBody } from '@stickers/shared';
import { isStorageError, storageErrorCode } from '../database/write-health';
import { ApiError, UploadAbortedError } from '../http/api-error';
import { RouteFaultFilter } from '../http/api-error.filter';
import { Metrics } from '../observability/metrics';
import { SubmitProblemsLog } from './submit-problems.log';

const REJECTIONS = new Set(['invalid', 'invalid_body', 'payload_too_large']);

/** `leads_submissions_total` labels of a refused submission: rejected (with the reason) or throttled (with why). */
function submissionLabels(body: LeadErrorBody): Record<string, string> {
  if (body.error === 'rate_limited') return { result: 'throttled', why: body.why };
  return REJECTIONS.has(body.error) ? { result: 'rejected', reason: body.error } : { result: body.error };
}

/**
 * Every refusal of `POST /leads` counted in `leads_submissions_total` and answered. A storage error anywhere on the route
 * (the secret's lockout read among them) is the submit's 503, in its throttled log line; anything else goes on to the
 * app's filter.
 */
@Catch()
@Injectable()
export class LeadsErrorFilter extends RouteFaultFilter {
  constructor(
    private readonly metrics: Metrics,
    private readonly problems: SubmitProblemsLog,
  ) {
    super();
  }

  override catch(error: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    if (isStorageError(error)) {
      this.problems.unavailable.note({ code: storageErrorCode(error) });
      error = new ApiError(503, { error: API_ERRORS.unavailable });
    }
    if (error instanceof UploadAbortedError) {
      this.metrics.submission(request, { result: 'aborted' });
      this.problems.aborted.note();
    } else if (error instanceof ApiError) {
      this.metrics.submission(request, submissionLabels(error.body));
    }
    super.catch(error, host);
  }
}
