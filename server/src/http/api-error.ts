import type { LeadErrorBody } from '@stickers/shared';

/** An answer of docs/requirements.md §1.2 that is not a success: its status, its exact body, and any headers. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: LeadErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${body.error}`);
  }
}

/** The client went away before its body was read: nobody is left to answer, and it is not a server error. */
export class UploadAbortedError extends Error {
  constructor(readonly received: number) {
    super('upload aborted by the client');
  }
}
