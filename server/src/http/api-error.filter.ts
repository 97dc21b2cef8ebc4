import { type ArgumentsHost, BadRequestException, Catch, Logger, NotFoundException } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import { API_ERRORS } from '@stickers/shared';
import { isStorageError, storageErrorCode } from '../database/write-health';
import { ApiError, UploadAbortedError } from './api-error';

/** Writes an ApiError as it is; an aborted upload, or an answer already begun, ends the connection instead. */
export function answerApiError(res: Response, error: ApiError | UploadAbortedError): void {
  if (error instanceof UploadAbortedError || res.headersSent) {
    res.destroy();
    return;
  }
  res.status(error.status).set(error.headers).json(error.body);
}

/** The router's 400 for a path whose %-escapes decode to no text (`/leads/%E0%A4%A/status`), as Nest maps it. */
const UNDECODABLE_PATH = /^Failed to decode param /;

/**
 * Every route's filter. An ApiError is answered as it is (an aborted upload ends the connection). A path no route
 * serves, or one that names nothing because it cannot be decoded: the documented `{"error":"not_found"}` rather than
 * Nest's own body. A database that cannot be read or written now (locked past its wait, unreachable, full): 503
 * `{"error":"unavailable"}`, as the submit answers it, on every route (the secret's lockout read among them). Anything
 * else goes to Nest's filter (a bug: logged, 500). Nest hands it the bot's handlers' errors too: those go on as Nest's
 * own filter for them does, logged and thrown.
 */
@Catch()
export class RouteFaultFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('ExceptionsHandler');

  override catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') {
      if (error instanceof Error) this.logger.error(error);
      throw error;
    }
    const res = host.switchToHttp().getResponse<Response>();
    if (error instanceof ApiError || error instanceof UploadAbortedError) return answerApiError(res, error);
    if (isStorageError(error)) {
      this.logger.warn({ msg: 'answered 503: the database is unavailable', code: storageErrorCode(error) });
      return answerApiError(res, new ApiError(503, { error: API_ERRORS.unavailable }));
    }
    if (error instanceof NotFoundException || (error instanceof BadRequestException && UNDECODABLE_PATH.test(error.message))) {
      return answerApiError(res, new ApiError(404, { error: API_ERRORS.notFound }));
    }
    super.catch(error, host);
  }
}
