import { type ArgumentsHost, Catch, type ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError, UploadAbortedError } from './api-error';

/**
 * Writes an ApiError as it is: its status, its headers and its body as JSON (docs/requirements.md §1.2), so no
 * Nest-shaped error reaches a caller. An upload the client aborted has nobody to answer: its connection is ended. An
 * answer already begun cannot get another: the connection is ended instead. Anything else is not caught here (Nest's
 * own handler logs it and answers 500).
 */
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

/**
 * A path no route serves: the documented `{"error":"not_found"}` rather than Nest's own body (it is the only place a
 * NotFoundException comes from; routes answer their own 404s as ApiError or HttpException with this body).
 */
@Catch(NotFoundException)
export class RouteNotFoundFilter implements ExceptionFilter {
  catch(_error: NotFoundException, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) res.destroy();
    else res.status(404).json({ error: 'not_found' });
  }
}
