import { Inject, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { CardService } from '../cards/card.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LeadMessagesRepository } from '../conversations/lead-messages.repository';
import type { LeadEventKind } from '../database/schema';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { Metrics } from '../observability/metrics';
import { LeadsRepository } from '../repositories/leads.repository';
import type { OutboxRow } from '../repositories/outbox.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramResult } from '../telegram/telegram-result';
import type { Card } from '../cards/card.renderer';
import { OutboxGate } from './outbox-gate';
import type { Outcome, OutboxHandler, PublishedLead } from './outcome';
import { MINIMAL_CARD_ALERT_INTERVAL_MS } from './retry-schedule';
import { type EditCall, type EditStep, nextStep, type Retry } from './telegram-answer.policy';

/** A line of the lead's trace: its lead, kind and detail, and the repeat it is about. */
export type TraceLine = [leadId: number, kind: LeadEventKind, detail: string, repeatId?: number | null];
/** A log line: its level, `msg` and fields besides `lead_number` (the trace line's lead). */
export type LogLine = [level: 'log' | 'warn', msg: string, fields?: Record<string, unknown>];

/** `minimal`: the full card's refusal when the minimal one took its place. */
interface CardEdit {
  next: Extract<EditStep, { step: 'success' | 'republish' | 'retry' }>;
  description: string;
  minimal: string | null;
}

/** The base of the Telegram kinds' handlers: their dependencies, a card's edit (§4.7, §12.5) and a retry (§4.2). */
export abstract class TelegramHandler implements OutboxHandler {
  protected readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) protected readonly config: ServerConfig,
    protected readonly repo: LeadsRepository,
    protected readonly messages: LeadMessagesRepository,
    protected readonly cards: CardService,
    protected readonly telegram: TelegramGateway,
    protected readonly chats: LeadsChatService,
    protected readonly alerts: AlertsService,
    protected readonly metrics: Metrics,
    protected readonly clock: Clock,
    protected readonly gate: OutboxGate,
    @Inject(MESSAGES) protected readonly t: Messages,
  ) {}

  abstract handle(row: OutboxRow): Promise<Outcome>;

  /**
   * A published card edited to show its lead as stored; one too long becomes the minimal card, so its buttons keep
   * working (§12.5). A flood pause or a migration is the outcome itself. `failuresSoFar`: the card's or the repeat's.
   */
  protected async editCard(action: EditCall['action'], lead: PublishedLead, failuresSoFar: number): Promise<CardEdit | Outcome> {
    const card = await this.cards.cardFor(lead, await this.repo.repeatsOf(lead.id));
    let answer = await this.edit(lead, card);
    let next = nextStep({ action, form: 'full' }, answer, failuresSoFar);
    let minimal: string | null = null;
    if (next.step === 'minimal_card') {
      minimal = answer.ok ? '' : answer.description;
      answer = await this.edit(lead, this.cards.minimalCardFor(lead));
      next = nextStep({ action, form: 'minimal' }, answer, failuresSoFar);
      if (next.step === 'success') {
        this.logger.warn({ msg: 'card rewritten in minimal form: the full card is too long', lead_number: lead.id, error: minimal });
        // §12.5: one alert per lead, whether the minimal card replaced it at publication or at a later rewrite.
        this.alert(`card_minimal:${lead.id}`, MINIMAL_CARD_ALERT_INTERVAL_MS, this.t.alerts.minimalCard(lead.id, minimal));
      }
    }
    const description = answer.ok ? '' : answer.description;
    switch (next.step) {
      case 'flood_pause':
        return this.gate.pause(next.pauseMs, description);
      case 'follow_migration':
        await this.chats.migrated(lead.chat_id, next.newChatId);
        return { defer: this.clock.now() };
      default:
        return { next, description, minimal };
    }
  }

  private edit(lead: PublishedLead, card: Card): Promise<TelegramResult<unknown>> {
    // Every later rewrite of a card that went out as plain text stays plain (§4.4).
    const html = lead.card_format !== 'plain';
    return this.telegram.edit(lead.chat_id, lead.message_id, html ? card.html : card.plain, html, card.keyboard);
  }

  /** A failure on the row's schedule; with `failed`, its record: the trace row `kind` and the warning `msg`. */
  protected retryLater(
    next: Retry,
    error: string,
    failed?: { leadId: number; kind: LeadEventKind; msg: string; repeatId?: number | null },
  ): Outcome {
    const { failures } = next;
    const record =
      failed &&
      this.recorded(
        null,
        [failed.leadId, failed.kind, `attempt ${failures}: ${error}`, failed.repeatId],
        ['warn', failed.msg, { attempt: failures, error }],
      );
    return { failed: { attempts: failures, nextAt: this.clock.now() + next.delayMs, error }, record };
  }

  /** The card message is gone (deleted, or never the bot's to edit): the trace says so and a new card is queued. */
  protected cardGone(leadId: number, description: string): Outcome {
    const trace: TraceLine = [leadId, 'card_gone', `${description}; a new card will be published`];
    const log: LogLine = ['warn', 'card message is gone; a new card will be published', { error: description }];
    return { done: 'card gone', record: this.recorded(() => this.repo.republish(leadId, description), trace, log) };
  }

  /** An outcome's record: `mark` (the row's own change), then the line of the trace, then the log line if any. */
  protected recorded(mark: (() => Promise<unknown>) | null, trace: TraceLine, log?: LogLine): () => Promise<void> {
    const [leadId, kind, detail, repeatId] = trace;
    return async () => {
      await mark?.();
      await this.repo.recordEvent(leadId, kind, this.clock.now(), detail, repeatId ?? null);
      if (log) this.logger[log[0]]({ msg: log[1], lead_number: leadId, ...log[2] });
    };
  }

  /** An admin alert, never awaited by a pass. */
  protected alert(key: string, intervalMs: number, text: string): void {
    void this.alerts.sendThrottled(key, intervalMs, text);
  }
}
