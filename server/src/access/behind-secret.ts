import {
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { ApiSecretRefusals } from '../http/api-docs';
import { ApiErrorFilter } from '../http/api-error.filter';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { SecretGuard } from './secret.guard';

/** The answers behind the secret hold personal data: no browser or proxy keeps a copy. */
class NoStore implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    context.switchToHttp().getResponse<Response>().setHeader('Cache-Control', 'no-store');
    return next.handle();
  }
}

/**
 * A controller behind `POST /leads`'s secret: each caller throttled first (`api`), then SecretGuard; ApiErrorFilter
 * answers; every answer past the guards `Cache-Control: no-store`.
 */
export const BehindSecret = () =>
  applyDecorators(
    ApiSecretRefusals({ throttled: true }),
    UseFilters(ApiErrorFilter),
    Throttled('api'),
    UseGuards(CallerThrottleGuard, SecretGuard),
    UseInterceptors(NoStore),
  );
