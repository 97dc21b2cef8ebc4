import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { TelegramGateway } from '../telegram/telegram.gateway';
import { TelegramLinksRepository } from './telegram-links.repository';

const DAY_MS = 24 * 60 * 60 * 1000;
/** 24 random bytes: 32 characters of base64url (`[A-Za-z0-9_-]`), within Telegram's 64 for a start parameter. */
const PAYLOAD_BYTES = 24;

/** The stored form of a payload: its SHA-256, hex. */
export function payloadHash(payload: string): string {
  return createHash('sha256').update(payload).digest('hex');
}

/**
 * "Continue in Telegram" links (docs/api.md, POST /leads `telegram_link`): `<LEADS_TELEGRAM_LINK_ROOT>/<bot>?start=<payload>`,
 * the payload random and single-use, bound to one lead for LEADS_TELEGRAM_LINK_DAYS days, one per answer. None without
 * a bot's username or with LEADS_TELEGRAM_LINK_DAYS=0, nor when it cannot be stored: the lead is stored whatever comes
 * of its link.
 */
@Injectable()
export class TelegramLinksService {
  private readonly logger = new Logger('TelegramLinks');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: Pick<ServerConfig, 'leads'>,
    private readonly telegram: TelegramGateway,
    private readonly links: TelegramLinksRepository,
    private readonly clock: Clock,
  ) {}

  async linkFor(leadId: number): Promise<string | null> {
    const days = this.config.leads.telegramLinkDays;
    if (days === 0 || !this.telegram.available) return null;
    // getMe's, asked once for the app by the gateway.
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
}
