import { type CanActivate, createParamDecorator, type ExecutionContext, HttpException, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { InboxAccessService, type InboxViewer } from './inbox-access.service';

/** The request, once the guard let it in: who is asking. */
interface InboxRequest extends Request {
  inboxViewer?: InboxViewer;
}

/** The answers of the guard, exactly as docs/api.md gives them. */
const INBOX_REFUSALS = {
  unavailable: { status: 503, body: { error: 'inbox_unavailable' } },
  membershipUnknown: { status: 503, body: { error: 'inbox_unavailable', why: 'membership_unknown' } },
  forbidden: { status: 403, body: { error: 'forbidden' } },
} as const;

const unauthorized = (why: 'missing' | 'invalid' | 'expired') => new HttpException({ error: 'unauthorized', why }, 401);

/** Every `/inbox/api/*` route: the launch data (401; 503 without a bot token), then access (403; 503: Telegram did not say). */
@Injectable()
export class InboxAuthGuard implements CanActivate {
  constructor(private readonly access: InboxAccessService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<InboxRequest>();
    const launch = this.access.launchOf(req);
    if (!launch.ok) {
      if (launch.why === 'unavailable') throw new HttpException(INBOX_REFUSALS.unavailable.body, INBOX_REFUSALS.unavailable.status);
      throw unauthorized(launch.why);
    }
    const decision = await this.access.decide(launch.user);
    if (!decision.ok) {
      const refusal = decision.why === 'forbidden' ? INBOX_REFUSALS.forbidden : INBOX_REFUSALS.membershipUnknown;
      throw new HttpException(refusal.body, refusal.status);
    }
    req.inboxViewer = decision.viewer;
    return true;
  }
}

/** The viewer the guard let in. */
export const Viewer = createParamDecorator((_: unknown, ctx: ExecutionContext): InboxViewer => {
  const viewer = ctx.switchToHttp().getRequest<InboxRequest>().inboxViewer;
  if (!viewer) throw new Error('@Viewer() on a route without InboxAuthGuard');
  return viewer;
});
