import { type ArgumentsHost, Catch, type ExceptionFilter, NotFoundException } from '@nestjs/common';
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

/** A path no route serves: the documented `{"error":"not_found"}` rather than Nest's own body. */
@Catch(NotFoundException)
export class RouteNotFoundFilter implements ExceptionFilter {
  catch(_error: NotFoundException, host: ArgumentsHost): void {
    answerApiError(host.switchToHttp().getResponse<Response>(), new ApiError(404, { error: API_ERRORS.notFound }));
  }
}
