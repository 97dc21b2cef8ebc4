import { Inject, Injectable, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import type { Card } from '../cards/card.renderer';
import { CardService } from '../cards/card.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramResult } from '../telegram/telegram-result';
import { OutboxGate } from './outbox-gate';
import { hasCard, type Outcome, type OutboxHandler, type PublishedLead, retryLater } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { MINIMAL_CARD_ALERT_INTERVAL_MS } from './retry-schedule';
import { type EditCall, type EditStep, type MinimalCard, nextStep } from './telegram-answer.policy';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** A button's rewrite: 'shown' when the card in Telegram shows the lead as stored; 'later' when the outbox tries again. */
export type CardRefresh = 'shown' | 'later';

/** An edit of a published card, as the answer policy reads it. */
interface CardEdit {
  answer: TelegramResult<unknown>;
  next: Exclude<EditStep, MinimalCard>;
  /** Telegram's refusal of the full card when the minimal card took its place (docs/requirements.md §12.5), else null. */
  minimal: string | null;
}

/** The outbox's `card_edit` rows (§4.7): a published card rewritten to show its lead as stored; the edit is shared with the pings. */
@Injectable()
export class CardRewriter implements OutboxHandler {
  private readonly logger = new Logger('Outbox');

  constructor(
    private readonly repo: LeadsRepository,
    private readonly cards: CardService,
    private readonly telegram: TelegramGateway,
    private readonly chats: LeadsChatService,
    private readonly alerts: AlertsService,
    private readonly events: LeadsRepository,
    private readonly clock: Clock,
    private readonly gate: OutboxGate,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /**
   * Edits a published card to `card`. When the policy says it is too long, the minimal card takes its place, so the
   * status buttons keep working (§12.5). `failuresSoFar` counts what the edit is for: the card's or the repeat's.
   */
  async editCard(action: EditCall['action'], lead: PublishedLead, card: Card, failuresSoFar: number): Promise<CardEdit> {
    const full = await this.edit(lead, card);
    const first = nextStep({ action, form: 'full' }, full, failuresSoFar);
    if (first.step !== 'minimal_card') return { answer: full, next: first, minimal: null };
    const refused = full.ok ? '' : full.description;
    const answer = await this.edit(lead, this.cards.minimalCardFor(lead));
    const next = nextStep({ action, form: 'minimal' }, answer, failuresSoFar);
    if (next.step === 'success') {
      this.logger.warn({ msg: 'card rewritten in minimal form: the full card is too long', lead_number: lead.id, error: refused });
      // §12.5: one alert per lead, whether the minimal card replaced it at publication or at a later rewrite.
      void this.alerts.sendThrottled(
        `card_minimal:${lead.id}`,
        MINIMAL_CARD_ALERT_INTERVAL_MS,
        this.t.alerts.minimalCard(lead.id, refused),
      );
    }
    return { answer, next, minimal: refused };
  }

  private edit(lead: PublishedLead, card: Card): Promise<TelegramResult<unknown>> {
    // Every later rewrite of a card that went out as plain text stays plain (§4.4).
    const html = lead.card_format !== 'plain';
    return this.telegram.edit(lead.chat_id, lead.message_id, html ? card.html : card.plain, html, card.keyboard);
  }

  /** Whether the lead's card in Telegram shows the lead as stored. */
  async shows(leadId: number): Promise<boolean> {
    const lead = await this.repo.findLead(leadId);
    return lead !== undefined && lead.published_at !== null && lead.card_dirty_at === null;
  }

  /** The card of the row's lead as the lead is now; a failure waits for the row's next time. */
  async handle(row: OutboxRow): Promise<Outcome> {
    const lead = await this.repo.findLead(row.lead_id);
    if (!lead || lead.card_dirty_at === null) return { done: 'shown' };
    // Not in the group (a card gone, published anew): the new card shows the lead as it is.
    if (!hasCard(lead)) return { done: 'card not published' };
    const card = await this.cards.cardFor(lead, await this.repo.repeatsOf(lead.id));
    const { answer, next, minimal } = await this.editCard('rewrite', lead, card, row.attempts);
    const description = answer.ok ? '' : answer.description;
    switch (next.step) {
      case 'success': {
        const dirtyAt = lead.card_dirty_at;
        const anonymised = lead.anonymised_at !== null ? ', anonymised' : '';
        const detail = `status ${lead.status}${anonymised}${minimal ? `; minimal card (${minimal})` : ''}`;
        const record = async () => {
          await this.repo.markCardRefreshed(lead.id, dirtyAt);
          await this.events.recordEvent(lead.id, 'card_rewritten', this.clock.now(), detail);
        };
        return { done: 'sent', record };
      }
      case 'flood_pause':
        return this.gate.pause(next.pauseMs, description);
      case 'republish':
        return { done: 'card gone', record: () => this.repo.republish(lead.id, description) };
      case 'follow_migration':
        await this.chats.migrated(lead.chat_id, next.newChatId);
        return { defer: this.clock.now() };
      case 'retry':
        return retryLater(next, this.clock.now(), description, async () => {
          await this.events.recordEvent(lead.id, 'card_rewrite_failed', this.clock.now(), `attempt ${next.failures}: ${description}`);
          this.logger.warn({ msg: 'card rewrite attempt failed', lead_number: lead.id, attempt: next.failures, error: description });
        });
    }
  }
}
