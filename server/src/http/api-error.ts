import type { LeadErrorBody } from '@stickers/shared';

/**
 * An answer of docs/requirements.md §1.2 that is not a success: its status, exact body and headers. Built without a
 * stack trace: an expected refusal, and V8's walk of the stack would cost every 401, 413, 422 and 429.
 */
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

/** The client went away before its body was read: nobody is left to answer, and it is not a server error. */
export class UploadAbortedError extends Error {
  constructor(readonly received: number) {
    super('upload aborted by the client');
  }
}
