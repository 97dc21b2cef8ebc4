import { API_ERRORS, type LeadErrorBody, type RateLimitReason } from '@stickers/shared';

/** A refusal of docs/requirements.md §1.2: status, exact body, headers. No stack trace: V8's walk would cost every one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: LeadErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${status} ${body.error}`);
    Error.stackTraceLimit = limit;
  }
}

/** Seconds for a `Retry-After` header: whole seconds, rounded up, at least 1. */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export const rateLimited = (why: RateLimitReason, seconds: number): ApiError =>
  new ApiError(429, { error: API_ERRORS.rateLimited, why }, { 'Retry-After': String(seconds) });

/** The client went away before its body was read: nobody is left to answer, and it is not a server error. */
export class UploadAbortedError extends Error {
  constructor() {
    super('upload aborted by the client');
  }
}
