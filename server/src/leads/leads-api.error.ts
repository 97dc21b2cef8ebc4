import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
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
export class LeadsApiErrorFilter implements ExceptionFilter {
  catch(error: LeadsApiError, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.body);
  }
}
