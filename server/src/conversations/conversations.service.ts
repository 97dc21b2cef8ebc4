import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import type { TelegramAccount } from '../domain/telegram-account';
import { TelegramLinksRepository } from './telegram-links.repository';
import { payloadHash } from './telegram-links.service';

/** A start parameter as Telegram allows it: 1–64 of `[A-Za-z0-9_-]`. */
const PAYLOAD = /^[A-Za-z0-9_-]{1,64}$/;

interface StartRequest {
  chatType: string | undefined;
  /** What follows `/start`; empty when the bot was opened without a link. */
  payload: string;
  from: TelegramAccount;
}

/** `/start <payload>` from a lead's "Continue in Telegram" link binds the visitor's Telegram account to that lead, once. */
@Injectable()
export class ConversationsService {
  private readonly logger = new Logger('Conversations');

  constructor(
    private readonly links: TelegramLinksRepository,
    private readonly clock: Clock,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** The bot's answer to `/start`; null outside a private chat: in a group, `/start` is no visitor's. */
  async start(request: StartRequest): Promise<string | null> {
    if (request.chatType !== 'private') return null;
    const payload = request.payload.trim();
    if (payload === '') return this.t.conversation.hello;
    if (!PAYLOAD.test(payload)) return this.t.conversation.invalid;
    const account = request.from;
    // No personal data in the event (it outlives an erasure): the account itself is the link's row, erased with the lead.
    const detail = "the visitor opened the lead's link in the bot: their Telegram account is bound (GET /leads telegram_account)";
    const result = await this.links.bind(payloadHash(payload), account, this.clock.now(), detail);
    if (result.kind !== 'bound') {
      this.logger.log({ msg: 'telegram link refused', why: result.kind });
      return this.t.conversation.invalid;
    }
    this.logger.log({ msg: 'telegram account bound', lead_number: result.leadId });
    return this.t.conversation.bound(result.leadId);
  }
}
