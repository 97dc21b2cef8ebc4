import { Inject, Injectable, Logger } from '@nestjs/common';
import { isExpiredError, parse, validate, type InitData } from '@telegram-apps/init-data-node';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { LeadScope } from '../repositories/lead-pages.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';

/** The Telegram user the launch data names (the fields the inbox shows). */
export interface InboxUser {
  id: number;
  first_name: string;
  last_name: string | null;
  username: string | null;
}

/** Who is asking, once let in; `scope`: null for every lead. */
export interface InboxViewer {
  user: InboxUser;
  manager: boolean;
  scope: LeadScope | null;
}

/** `unavailable`: no bot token to check a signature with. */
type LaunchCheck = { ok: true; user: InboxUser } | { ok: false; why: 'missing' | 'invalid' | 'expired' | 'unavailable' };

/** `forbidden`: neither a manager nor a member; `unknown`: Telegram could not say. */
type AccessDecision = { ok: true; viewer: InboxViewer } | { ok: false; why: 'forbidden' | 'unknown' };

/** What getChatMember said of a user, cached: the leads chats they are in; an administrator of the main one. */
interface Membership {
  chats: ReadonlySet<string>;
  admin: boolean;
  until: number;
}

const MEMBER_STATUSES = new Set(['creator', 'administrator', 'member']);

/** How far ahead of the app's clock launch data may be dated (further, it would never expire). */
export const LAUNCH_FUTURE_SKEW_MS = 5 * 60 * 1000;
const ADMIN_STATUSES = new Set(['creator', 'administrator']);

/** docs/requirements.md §17: launch data checked on every call, then a manager, or a member of a leads chat (getChatMember). */
@Injectable()
export class InboxAccessService {
  private readonly logger = new Logger('Inbox');
  private readonly memberships = new Map<number, Membership>();

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly telegram: TelegramGateway,
    private readonly chats: LeadsChatService,
    private readonly clock: Clock,
  ) {}

  private readonly launches = new WeakMap<object, LaunchCheck>();

  /** checkLaunch for one request, done once however many guards ask (the inbox's throttle, then its auth guard). */
  launchOf(req: { headers: { authorization?: string } }): LaunchCheck {
    let launch = this.launches.get(req);
    if (!launch) this.launches.set(req, (launch = this.checkLaunch(req.headers.authorization)));
    return launch;
  }

  /** `Authorization: tma <initData>`: the signature under the bot's token, and the age (LEADS_INBOX_MAX_AGE_S, on our clock). */
  checkLaunch(authorization: string | undefined): LaunchCheck {
    const token = this.config.telegram.token;
    if (!token) return { ok: false, why: 'unavailable' };
    const m = /^tma (.+)$/s.exec(authorization?.trim() ?? '');
    if (!m) return { ok: false, why: 'missing' };
    const initData = m[1].trim();
    let data: InitData;
    try {
      // The age is checked below on the app's clock (the library reads Date.now()); here the signature only.
      validate(initData, token, { expiresIn: 0 });
      // Clients before Bot API 8.0 send no `signature` (the HMAC just checked is what counts); the parser insists on one.
      const fields = new URLSearchParams(initData);
      if (!fields.has('signature')) fields.set('signature', '');
      data = parse(fields);
    } catch (err) {
      return { ok: false, why: isExpiredError(err) ? 'expired' : 'invalid' };
    }
    // Launch data without a user (an inline query's, a chat's) names nobody to let in.
    if (!data.user) return { ok: false, why: 'invalid' };
    const { id, first_name, last_name = null, username = null } = data.user;
    const user: InboxUser = { id, first_name, last_name, username };
    const age = this.clock.now() - data.auth_date.getTime();
    if (age > this.config.inbox.maxAgeSec * 1000) return { ok: false, why: 'expired' };
    // Logged: a server clock far behind Telegram's refuses every launch the same way.
    if (-age > LAUNCH_FUTURE_SKEW_MS) {
      this.logger.warn({ msg: 'inbox launch data dated ahead of the server clock', user_id: user.id, ahead_s: Math.round(-age / 1000) });
      return { ok: false, why: 'invalid' };
    }
    return { ok: true, user };
  }

  /** A manager, or a member of a leads chat; Telegram asked at most once per LEADS_INBOX_MEMBER_CACHE_S per user. */
  async decide(user: InboxUser): Promise<AccessDecision> {
    const managers = this.config.telegram.managerIds;
    if (managers?.includes(user.id)) return { ok: true, viewer: { user, manager: true, scope: null } };
    const membership = await this.membership(user.id);
    if (membership === null) return { ok: false, why: 'unknown' };
    if (membership.chats.size === 0) return { ok: false, why: 'forbidden' };
    // The manager rule of /stickers_forget: the list when set, else an administrator of the leads chat.
    const manager = managers === null && membership.admin;
    return { ok: true, viewer: { user, manager, scope: await this.scopeOf(membership.chats) } };
  }

  /** The leads of the chats a member is in: their cards went there, or their source's route will send them there. */
  private async scopeOf(chats: ReadonlySet<string>): Promise<LeadScope> {
    const routes = this.config.telegram.routes;
    const routedSources: string[] = [];
    for (const route of routes) {
      const target = await this.chats.cardTarget({ source_landing: route.source });
      if (target && chats.has(target.chatId)) routedSources.push(route.source.toLowerCase());
    }
    const main = await this.chats.leadsChatId();
    const unrouted = main !== null && chats.has(main) ? { routed: routes.map((r) => r.source.toLowerCase()) } : null;
    return { chats: [...chats], routedSources, unrouted };
  }

  private async membership(userId: number): Promise<Membership | null> {
    const now = this.clock.now();
    const cached = this.memberships.get(userId);
    if (cached && cached.until > now) return cached;
    const main = await this.chats.leadsChatId();
    const memberOf = new Set<string>();
    let admin = false;
    let unknown = false;
    for (const chatId of await this.chats.leadsChats()) {
      const answer = await this.telegram.getChatMember(chatId, userId);
      if (!answer.ok) {
        // Refused: Telegram does not know the user there ("user not found"), an answer. Anything else says nothing.
        if (answer.kind !== 'refused') {
          unknown = true;
          this.logger.warn({ msg: 'inbox membership check failed', user_id: userId, error: answer.description });
        }
        continue;
      }
      const { status } = answer.value;
      const isMember = MEMBER_STATUSES.has(status) || (status === 'restricted' && answer.value.is_member === true);
      if (isMember) memberOf.add(chatId);
      if (chatId === main && ADMIN_STATUSES.has(status)) admin = true;
    }
    // A member is let in even when another chat did not answer; a "no" counts only when every chat answered.
    if (memberOf.size === 0 && unknown) return null;
    const membership = { chats: memberOf, admin, until: now + this.config.inbox.memberCacheSec * 1000 };
    this.memberships.set(userId, membership);
    if (this.memberships.size > 10_000) this.memberships.delete(this.memberships.keys().next().value!);
    return membership;
  }
}
