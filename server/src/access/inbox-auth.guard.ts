import { type CanActivate, createParamDecorator, type ExecutionContext, HttpException, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { InboxAccessService, type InboxViewer } from './inbox-access.service';

interface InboxRequest extends Request {
  inboxViewer?: InboxViewer;
}

/** Every `/inbox/api/*` route: the launch data (401; 503 without a bot token), then access (403; 503: Telegram did not say). */
@Injectable()
export class InboxAuthGuard implements CanActivate {
  constructor(private readonly access: InboxAccessService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<InboxRequest>();
    const launch = this.access.launchOf(req);
    if (!launch.ok) {
      if (launch.why === 'unavailable') throw new HttpException({ error: 'inbox_unavailable' }, 503);
      throw new HttpException({ error: 'unauthorized', why: launch.why }, 401);
    }
    const decision = await this.access.decide(launch.user);
    if (decision.ok) {
      req.inboxViewer = decision.viewer;
      return true;
    }
    if (decision.why === 'forbidden') throw new HttpException({ error: 'forbidden' }, 403);
    throw new HttpException({ error: 'inbox_unavailable', why: 'membership_unknown' }, 503);
  }
}

export const Viewer = createParamDecorator((_: unknown, ctx: ExecutionContext): InboxViewer => {
  const viewer = ctx.switchToHttp().getRequest<InboxRequest>().inboxViewer;
  if (!viewer) throw new Error('@Viewer() on a route without InboxAuthGuard');
  return viewer;
});
