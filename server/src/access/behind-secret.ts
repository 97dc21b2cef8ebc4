import { applyDecorators, type CanActivate, type ExecutionContext, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ApiSecretRefusals } from '../http/api-docs';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { SecretGuard } from './secret.guard';

/**
 * The answers behind the secret (and the inbox's) hold personal data: no browser or proxy keeps a copy. A guard that lets
 * every request by, first of the guards, so that their refusals (401, 429) carry the header too.
 */
export class NoStore implements CanActivate {
  canActivate(context: ExecutionContext): true {
    context.switchToHttp().getResponse<Response>().setHeader('Cache-Control', 'no-store');
    return true;
  }
}

/**
 * A controller behind `POST /leads`'s secret: each caller throttled first (`api`), then SecretGuard; the app's filter
 * answers; every answer `Cache-Control: no-store`.
 */
export const BehindSecret = () =>
  applyDecorators(ApiSecretRefusals({ throttled: true }), Throttled('api'), UseGuards(NoStore, CallerThrottleGuard, SecretGuard));
