import { applyDecorators, UseFilters, UseGuards } from '@nestjs/common';
import { ApiSecretRefusals } from '../http/api-docs';
import { ApiErrorFilter } from '../http/api-error.filter';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { SecretGuard } from './secret.guard';

/** A controller behind `POST /leads`'s secret: each caller throttled first (`api`), then SecretGuard; ApiErrorFilter answers. */
export const BehindSecret = () =>
  applyDecorators(
    ApiSecretRefusals({ throttled: true }),
    UseFilters(ApiErrorFilter),
    Throttled('api'),
    UseGuards(CallerThrottleGuard, SecretGuard),
  );
