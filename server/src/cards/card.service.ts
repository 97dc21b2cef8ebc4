import { Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { parseRepeatChanges, type Lead, type LeadRepeat } from '../domain/lead';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { LeadMessagesRepository } from '../conversations/lead-messages.repository';
import { TelegramLinksRepository } from '../conversations/telegram-links.repository';
import { type Card, renderCard, renderMinimalCard } from './card.renderer';

/** The card of a lead as it should look now, from the lead and its repeats, with this deployment's options. */
@Injectable()
export class CardService {
  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(MESSAGES) private readonly messages: Messages,
    private readonly telegramLinks: TelegramLinksRepository,
    private readonly conversations: LeadMessagesRepository,
  ) {}

  async cardFor(lead: Lead, repeats: Pick<LeadRepeat, 'created_at' | 'changes'>[]): Promise<Card> {
    const account = (await this.telegramLinks.accountsOf([lead.id])).get(lead.id) ?? null;
    const binding = account ? await this.conversations.bindingOf(lead.id) : null;
    const conversation = binding?.stopped_at != null ? 'stopped' : binding?.blocked_at != null ? 'blocked' : null;
    return renderCard(
      { ...lead, telegram_account: account, telegram_conversation: conversation },
      repeats.map((r) => ({ created_at: r.created_at, changes: parseRepeatChanges(r.changes) })),
      { pii: this.config.leads.cardPii, timezone: this.config.timezone, messages: this.messages },
    );
  }

  minimalCardFor(lead: Lead): Card {
    return renderMinimalCard(lead, { timezone: this.config.timezone, messages: this.messages });
  }
}
