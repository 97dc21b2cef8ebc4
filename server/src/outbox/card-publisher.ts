import { Injectable, Logger } from '@nestjs/common';
import type { Card } from '../cards/card.renderer';
import { CardService } from '../cards/card.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import type { Lead, LeadEventKind } from '../database/schema';
import { Metrics } from '../observability/metrics';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway, type TelegramFailure } from '../telegram/telegram.gateway';
import { OutboxAlerts } from './outbox-alerts';
import { OutboxGate } from './outbox-gate';
import { BATCH_SIZE } from './retry-schedule';
import { nextStep, type PublishCall, type PublishFailureStep, type Retry } from './telegram-answer.policy';

/** 'flood': Telegram asked to wait, and the rest of the pass waits too. */
export type Step = 'done' | 'flood';

type PublishForm = PublishCall['form'];

/** A card Telegram accepted whose publication is not in the database yet (the write after the send failed). */
export interface UnrecordedCard {
  leadId: number;
  requestId: string;
  chatId: string;
  messageId: number;
  format: 'html' | 'plain';
  repeatIds: number[];
  dirtyAt: number | null;
  sentAt: number;
  kind: Extract<LeadEventKind, 'published' | 'published_plain' | 'published_minimal'>;
  detail: string;
  /** What Telegram refused before this fallback card went out. */
  refused?: string;
}

const EVENT: Record<PublishForm, UnrecordedCard['kind']> = { html: 'published', plain: 'published_plain', minimal: 'published_minimal' };

/**
 * Publishes the cards of stored leads (docs/requirements.md §4.1–§4.5, §12.5): the full card, else the plain-text or
 * the minimal one as the answer policy says, in the leads group. A sent card is remembered until it is recorded
 * (§12.7), so a database that refuses the write never turns into a card per pass.
 */
@Injectable()
export class CardPublisher {
  private readonly logger = new Logger('Outbox');
  private readonly unrecorded = new Map<number, UnrecordedCard>();
  /** When a card last went out (any form); undefined until read from the database. */
  private lastCardAt: number | null | undefined;

  constructor(
    private readonly repo: LeadsRepository,
    private readonly cards: CardService,
    private readonly telegram: TelegramGateway,
    private readonly chats: LeadsChatService,
    private readonly alerts: OutboxAlerts,
    private readonly events: LeadEventsRepository,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    private readonly gate: OutboxGate,
  ) {}

  /** When the outbox last put a card in the group, full, plain or minimal (null: never). */
  async lastCardPublishedAt(): Promise<number | null> {
    if (this.lastCardAt === undefined) this.lastCardAt = await this.repo.lastPublishedAt();
    return this.lastCardAt;
  }

  /** Cards sent but not recorded yet, for the runner's logs. */
  unrecordedCards(): UnrecordedCard[] {
    return [...this.unrecorded.values()];
  }

  async recordUnrecorded(): Promise<void> {
    for (const card of [...this.unrecorded.values()]) await this.record(card);
  }

  /** Up to 10 due leads, lowest number first. False when the pass must stop (flood control, no bot, no chat). */
  async publishDue(): Promise<boolean> {
    if (!this.gate.ready()) return false;
    const chatId = await this.chats.leadsChatId();
    if (!chatId) {
      this.gate.pausedOnce('publishing paused: LEADS_CHAT_ID is not set (leads are stored)');
      return false;
    }
    const due = await this.repo.dueLeads(this.clock.now(), BATCH_SIZE);
    for (const lead of due) {
      if (this.gate.stopped) return false;
      const step = await this.publish(lead, (await this.chats.leadsChatId()) ?? chatId);
      if (step !== 'done') return false; // flood control: the rest of the batch waits too
    }
    return true;
  }

  private async publish(lead: Lead, chatId: string, afterMigration = false): Promise<Step> {
    const unrecorded = this.unrecorded.get(lead.id);
    if (unrecorded) {
      await this.record(unrecorded);
      return 'done';
    }
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = this.cards.cardFor(lead, repeats);
    const base = { leadId: lead.id, requestId: lead.request_id, chatId, repeatIds: repeats.map((r) => r.id), dirtyAt: lead.card_dirty_at };
    this.metrics.inc('outbox_publish_attempts_total');
    let form: PublishForm = 'html';
    let refused: string | undefined;
    for (;;) {
      const sent = await this.send(chatId, form, form === 'minimal' ? this.cards.minimalCardFor(lead) : card);
      if (sent.ok) return this.sent({ ...base, form, messageId: sent.value.message_id, refused });
      const next: PublishFailureStep = nextStep({ action: 'publish', form, afterMigration }, sent, lead.publish_attempts);
      switch (next.step) {
        case 'flood_pause':
          return this.gate.flood(next.pauseMs, sent.description, async () => {
            await this.repo.deferLead(lead.id, this.gate.pauseEndsAt, sent.description);
            // The trace tells of a pause on the card's first send; a fallback's pause only moves the lead's time.
            if (form === 'html') {
              const detail = `flood control: retry after ${next.pauseMs / 1000} s`;
              await this.events.record(lead.id, 'publish_deferred', this.clock.now(), detail);
            }
          });
        case 'follow_migration':
          await this.chats.migrated(chatId, next.newChatId);
          return this.publish(lead, next.newChatId, true);
        case 'plain_text':
        case 'minimal_card':
          // Another form of the same card, tried once (§4.4, §12.5).
          form = next.step === 'plain_text' ? 'plain' : 'minimal';
          refused = sent.description;
          break;
        case 'retry':
          return this.failed(lead, sent, next);
      }
    }
  }

  private send(chatId: string, form: PublishForm, card: Card) {
    const plain = form === 'plain';
    return this.telegram.send({ chatId, text: plain ? card.plain : card.html, html: !plain, keyboard: card.keyboard });
  }

  /** Telegram has the card: remember it first, so that a failing write cannot make the next pass send it again. */
  private async sent(card: Omit<UnrecordedCard, 'sentAt' | 'kind' | 'format' | 'detail'> & { form: PublishForm }): Promise<Step> {
    const { form, ...rest } = card;
    const where = `chat ${card.chatId}, message ${card.messageId}`;
    const detail = {
      html: where,
      plain: `HTML refused (${card.refused}); ${where}`,
      minimal: `card refused (${card.refused}); minimal card in ${where}`,
    }[form];
    const entry: UnrecordedCard = {
      ...rest,
      format: form === 'plain' ? 'plain' : 'html',
      kind: EVENT[form],
      detail,
      sentAt: this.clock.now(),
    };
    this.unrecorded.set(entry.leadId, entry);
    await this.record(entry);
    return 'done';
  }

  private async record(card: UnrecordedCard): Promise<void> {
    const { leadId, chatId, messageId, format, repeatIds, dirtyAt } = card;
    await this.repo.markPublished({ leadId, chatId, messageId, format, repeatIds, dirtyAt, now: card.sentAt });
    this.unrecorded.delete(leadId);
    this.lastCardAt = Math.max(this.lastCardAt ?? 0, card.sentAt);
    this.metrics.inc('outbox_published_total');
    const log = { lead_number: leadId, request_id: card.requestId, message_id: messageId };
    if (card.kind === 'published') this.logger.log({ msg: 'card published', ...log });
    if (card.kind === 'published_plain') {
      this.logger.warn({ msg: 'card published as plain text', ...log, error: card.refused });
      this.alerts.plainCard(leadId, card.refused ?? '');
    }
    if (card.kind === 'published_minimal') {
      this.logger.warn({ msg: 'card published in minimal form: the full card is too long', ...log, error: card.refused });
      this.alerts.minimalCard(leadId, card.refused ?? '');
    }
    await this.events.record(leadId, card.kind, this.clock.now(), card.detail);
  }

  private async failed(lead: Lead, failure: TelegramFailure, next: Retry): Promise<Step> {
    const attempts = next.failures;
    const nextAt = this.clock.now() + next.delayMs;
    await this.repo.markPublishFailed(lead.id, attempts, nextAt, failure.description);
    const detail = `attempt ${attempts}: ${failure.description}; next attempt at ${new Date(nextAt).toISOString()}`;
    await this.events.record(lead.id, 'publish_failed', this.clock.now(), detail);
    this.metrics.inc('outbox_publish_failures_total');
    const log = { lead_number: lead.id, request_id: lead.request_id, attempt: attempts, error: failure.description };
    this.logger.warn({ msg: 'publish attempt failed', ...log });
    if (next.alert) this.alerts.publishFailing(lead.id, attempts, failure.description);
    return 'done';
  }
}
