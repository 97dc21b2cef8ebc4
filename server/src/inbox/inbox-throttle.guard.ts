import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerStorage, type ThrottlerModuleOptions } from '@nestjs/throttler';
import type { IncomingMessage } from 'node:http';
import { callerAddress } from '../http/caller-address';
import { CallerThrottleGuard } from '../http/caller-throttle';
import { InboxAccessService } from '../access/inbox-access.service';

/** Before InboxAuthGuard: per Telegram user of launch data that checks out, else per caller address (never a getChatMember). */
@Injectable()
export class InboxThrottleGuard extends CallerThrottleGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly access: InboxAccessService,
  ) {
    super(options, storage, reflector);
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    const request = req as unknown as IncomingMessage;
    const launch = this.access.launchOf(request);
    return Promise.resolve(launch.ok ? `user:${launch.user.id}` : `address:${callerAddress(request)}`);
  }
}
