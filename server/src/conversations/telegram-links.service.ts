import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { TelegramAccount } from '../domain/telegram-account';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { TelegramGateway } from '../telegram/telegram.gateway';
import { TelegramLinksRepository } from './telegram-links.repository';

const DAY_MS = 24 * 60 * 60 * 1000;
/** 24 random bytes: 32 characters of base64url (`[A-Za-z0-9_-]`), within Telegram's 64 for a start parameter. */
const PAYLOAD_BYTES = 24;
/** A start parameter as Telegram allows it: 1–64 of `[A-Za-z0-9_-]`. */
const PAYLOAD = /^[A-Za-z0-9_-]{1,64}$/;

/** The stored form of a payload: its SHA-256, hex. */
function payloadHash(payload: string): string {
  return createHash('sha256').update(payload).digest('hex');
}

interface StartRequest {
  chatType: string | undefined;
  /** What follows `/start`; empty when the bot was opened without a link. */
  payload: string;
  from: TelegramAccount;
}

/** "Continue in Telegram" links: random, single-use, one lead's for LEADS_TELEGRAM_LINK_DAYS; `/start <payload>` binds. */
@Injectable()
export class TelegramLinksService {
  private readonly logger = new Logger('TelegramLinks');
  /** `/start`'s lines go with the rest of the conversation's. */
  private readonly conversationLogger = new Logger('Conversations');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: Pick<ServerConfig, 'leads'>,
    private readonly telegram: TelegramGateway,
    private readonly links: TelegramLinksRepository,
    private readonly clock: Clock,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async linkFor(leadId: number): Promise<string | null> {
    const days = this.config.leads.telegramLinkDays;
    if (days === 0) return null;
    const me = await this.telegram.identity();
    const bot = me.ok ? me.value.username : undefined;
    if (bot === undefined) return null;
    const payload = randomBytes(PAYLOAD_BYTES).toString('base64url');
    const now = this.clock.now();
    try {
      await this.links.add({ payload_hash: payloadHash(payload), lead_id: leadId, created_at: now, expires_at: now + days * DAY_MS });
    } catch (err) {
      this.logger.warn({ msg: 'telegram link not stored', lead_number: leadId, error: err instanceof Error ? err.message : String(err) });
      return null;
    }
    return `${this.config.leads.telegramLinkRoot}/${bot}?start=${payload}`;
  }

  /** The bot's answer to `/start`; null outside a private chat: in a group, `/start` is no visitor's. */
  async start(request: StartRequest): Promise<string | null> {
    if (request.chatType !== 'private') return null;
    const payload = request.payload.trim();
    if (payload === '') return this.t.conversation.hello;
    if (!PAYLOAD.test(payload)) return this.t.conversation.invalid;
    // No personal data in the event (it outlives an erasure): the account itself is the link's row, erased with the lead.
    const detail = "the visitor opened the lead's link in the bot: their Telegram account is bound (GET /leads telegram_account)";
    const result = await this.links.bind(payloadHash(payload), request.from, this.clock.now(), detail);
    if (result.kind !== 'bound') {
      this.conversationLogger.log({ msg: 'telegram link refused', why: result.kind });
      return this.t.conversation.invalid;
    }
    this.conversationLogger.log({ msg: 'telegram account bound', lead_number: result.leadId });
    return this.t.conversation.bound(result.leadId);
  }
}
