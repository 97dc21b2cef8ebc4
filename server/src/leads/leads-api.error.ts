import { type ArgumentsHost, Catch, type ExceptionFilter, Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
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
    this.answer(req, res, error);
  }

  /** What `catch` does, for POST /leads, which is served outside Nest's router (leads.controller.ts). */
  answer(req: IncomingMessage, res: ServerResponse, error: LeadsApiError | UploadAbortedError): void {
    if (error instanceof UploadAbortedError) {
      this.metrics.inc('leads_submissions_total', { result: 'aborted' });
      this.problems.uploadAborted();
      if (!res.headersSent) res.destroy();
      return;
    }
    if (req.method === 'POST') this.metrics.inc('leads_submissions_total', submissionLabels(error.body));
    writeJson(res, error.status, error.body, error.headers);
  }
}

/**
 * Writes a JSON answer straight to Node's response: the same status, headers and bytes as Express's `res.json`
 * (with ETag off), without its per-request work (docs/performance.md, issue 15). Headers set before (by a middleware)
 * are kept. When an answer has begun already, the connection is ended instead.
 */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  // An answer already begun cannot get another: the connection is ended instead (as Nest's handler does).
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const json = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

/** `leads_submissions_total` labels of a refused submission: rejected (with the reason) or throttled (with why). */
export function submissionLabels(body: LeadErrorBody): Record<string, string> {
  if (body.error === 'rate_limited') return { result: 'throttled', why: body.why };
  if (body.error === 'invalid' || body.error === 'invalid_body' || body.error === 'payload_too_large')
    return { result: 'rejected', reason: body.error };
  return { result: body.error };
}
