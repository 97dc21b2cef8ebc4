import { type ArgumentsHost, BadRequestException, Catch, type ExceptionFilter, NotFoundException } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import { API_ERRORS } from '@stickers/shared';
import { ApiError, UploadAbortedError } from './api-error';

/** Writes an ApiError as it is; an aborted upload, or an answer already begun, ends the connection instead. */
export function answerApiError(res: Response, error: ApiError | UploadAbortedError): void {
  if (error instanceof UploadAbortedError || res.headersSent) {
    res.destroy();
    return;
  }
  res.status(error.status).set(error.headers).json(error.body);
}

/** The routes behind the API secret (`POST /leads`, the export, the trace): `@UseFilters(ApiErrorFilter)`. */
@Catch(ApiError, UploadAbortedError)
export class ApiErrorFilter implements ExceptionFilter {
  catch(error: ApiError | UploadAbortedError, host: ArgumentsHost): void {
    answerApiError(host.switchToHttp().getResponse<Response>(), error);
  }
}

/** The router's 400 for a path whose %-escapes decode to no text (`/leads/%E0%A4%A/status`), as Nest maps it. */
const UNDECODABLE_PATH = /^Failed to decode param /;

/**
 * A path no route serves, or one that names nothing because it cannot be decoded: the documented
 * `{"error":"not_found"}` rather than Nest's own body. Any other 400 goes to Nest's filter.
 */
@Catch(NotFoundException, BadRequestException)
export class RouteNotFoundFilter extends BaseExceptionFilter {
  override catch(error: NotFoundException | BadRequestException, host: ArgumentsHost): void {
    if (error instanceof BadRequestException && !UNDECODABLE_PATH.test(error.message)) return super.catch(error, host);
    answerApiError(host.switchToHttp().getResponse<Response>(), new ApiError(404, { error: API_ERRORS.notFound }));
  }
}
