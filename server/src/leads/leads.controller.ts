import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { API_ERRORS, IDEMPOTENCY_HEADER, type LeadAcceptedBody, type LeadErrorBody } from '@stickers/shared';
import { readJsonObject, UploadAbortedError } from './json-body.reader';
import { LeadsApiError, LeadsApiErrorFilter, submissionLabels, writeJson } from './leads-api.error';
import { LeadsAccessGuard, callerAddress } from './leads-access.guard';
import { LeadsService } from './leads.service';
import { Metrics } from '../observability/metrics';

/**
 * The path of a request target: up to its query on the common form (`/leads?…`); an absolute-form target
 * (`http://host/leads`) or one with a fragment is parsed, as Express's router does, to its path.
 */
function pathOf(url: string): string {
  if (url.startsWith('/') && !url.includes('#')) {
    const end = url.indexOf('?');
    return end === -1 ? url : url.slice(0, end);
  }
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return url;
  }
}

/** The body Nest gives an unexpected error, kept for POST /leads so that nothing changes for a caller. */
const INTERNAL_ERROR = { statusCode: 500, message: 'Internal server error' };

/**
 * `POST /leads` (docs/requirements.md §1.2): the secret check, then the body, then the service; the outcome mapped
 * to status and body.
 *
 * Served ahead of Nest's router, not through it (issue 15, docs/decisions.md): `LeadsRouteMount` hands every request
 * for which `handles` is true to `serve`, and everything else to Express as before. The steps and their order are the ones the
 * Nest route had (the guard's checks, then the body read after them, the same answers and metrics); what goes is the
 * per-request cost of Express's router and Nest's execution context (guards, filters, the `res.json` path), which a
 * CPU profile showed to be most of this route's time where the database has nothing to do (a duplicate, a 422).
 */
@Injectable()
export class LeadsController {
  private readonly logger = new Logger('ExceptionsHandler');

  constructor(
    private readonly leads: LeadsService,
    private readonly access: LeadsAccessGuard,
    private readonly errors: LeadsApiErrorFilter,
    private readonly metrics: Metrics,
  ) {}

  /**
   * The requests Express's route `POST /leads` matched: its path (without the query; of an absolute-form target or
   * one with a fragment, the path as Express reads it), any case, one trailing slash.
   */
  handles(req: IncomingMessage): boolean {
    if (req.method !== 'POST' || req.url === undefined) return false;
    const path = pathOf(req.url).toLowerCase();
    return path === '/leads' || path === '/leads/';
  }

  /** Answers the request; never rejects (an unexpected error is logged and answered 500, as Nest would). */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const refusal = await this.access.refusal(req);
      if (refusal) return this.errors.answer(req, res, refusal);
      await this.submit(req, res);
    } catch (err) {
      if (err instanceof LeadsApiError || err instanceof UploadAbortedError) return this.errors.answer(req, res, err);
      this.logger.error(err instanceof Error ? err.message : String(err), err instanceof Error ? err.stack : undefined);
      writeJson(res, 500, INTERNAL_ERROR);
    }
  }

  private async submit(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonObject(req);
    const key = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
    const outcome = await this.leads.submit({
      body,
      callerIp: callerAddress(req),
      idempotencyKey: typeof key === 'string' ? key : undefined,
    });
    // Every outcome is answered here, not thrown: an exception costs a stack trace per request.
    switch (outcome.kind) {
      case 'invalid':
        return this.refuse(res, 422, { error: API_ERRORS.invalid, errors: outcome.errors });
      case 'unavailable':
        return this.refuse(res, 503, { error: API_ERRORS.unavailable });
      case 'limited':
        return this.refuse(res, 429, { error: API_ERRORS.rateLimited, why: outcome.why }, { 'Retry-After': String(outcome.retryAfterSec) });
      case 'created':
        return this.accept(res, 201, outcome.kind, { lead_number: outcome.leadNumber, duplicate: false, repeat: false });
      case 'repeat':
        return this.accept(res, 200, outcome.kind, { lead_number: outcome.leadNumber, duplicate: true, repeat: true });
      case 'duplicate':
        return this.accept(res, 200, outcome.kind, { lead_number: outcome.leadNumber, duplicate: true, repeat: outcome.repeat });
    }
  }

  private accept(res: ServerResponse, status: number, result: 'created' | 'repeat' | 'duplicate', body: LeadAcceptedBody): void {
    this.metrics.inc('leads_submissions_total', { result });
    writeJson(res, status, body);
  }

  private refuse(res: ServerResponse, status: number, body: LeadErrorBody, headers?: Record<string, string>): void {
    this.metrics.inc('leads_submissions_total', submissionLabels(body));
    writeJson(res, status, body, headers);
  }
}
