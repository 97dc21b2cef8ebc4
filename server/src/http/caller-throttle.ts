import { type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerModuleOptions, type ThrottlerRequest } from '@nestjs/throttler';
import type { IncomingMessage } from 'node:http';
import type { ServerConfig } from '../config/config';
import { rateLimited, retryAfterSeconds } from './api-error';
import { callerAddress } from './caller-address';
import { WindowCounterStorage } from './window-counter.storage';

/** The per-caller throttles, each with its limit in ServerConfig.throttle (docs/api.md, "The per-caller throttles"). */
export const THROTTLES = ['submit', 'api', 'export', 'inbox', 'webhook'] as const;
export type ThrottleName = (typeof THROTTLES)[number];

const ROUTE_THROTTLES = 'stickers:throttles';

/** One named throttler per throttle, its limit per LEADS_THROTTLE_WINDOW_SEC in memory; Retry-After, no X-RateLimit headers. */
export function throttlerOptions(config: ServerConfig): ThrottlerModuleOptions {
  const ttl = config.throttle.windowSec * 1000;
  return {
    setHeaders: false,
    storage: new WindowCounterStorage(),
    throttlers: THROTTLES.map((name) => ({ name, ttl, limit: config.throttle[name] })),
  };
}

/** The throttles a route's `@Throttled(…)` names, keyed by the caller alone; first in `@UseGuards`, so a refusal costs nothing else. */
@Injectable()
export class CallerThrottleGuard extends ThrottlerGuard {
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const names = this.reflector.getAllAndMerge<ThrottleName[]>(ROUTE_THROTTLES, [
      request.context.getHandler(),
      request.context.getClass(),
    ]);
    if (!names.includes(request.throttler.name as ThrottleName)) return true;
    return super.handleRequest(request);
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    return Promise.resolve(`address:${callerAddress(req as unknown as IncomingMessage)}`);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }

  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    return Promise.reject(rateLimited('flood', retryAfterSeconds(detail.timeToBlockExpire * 1000)));
  }
}

/** Names the throttles of a route or a controller (merged), for CallerThrottleGuard. */
export function Throttled(...names: ThrottleName[]): MethodDecorator & ClassDecorator {
  return SetMetadata(ROUTE_THROTTLES, names);
}
