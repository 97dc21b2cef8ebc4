import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Card } from '../cards/card.renderer';
import { CardService } from '../cards/card.service';
import { type CardTarget, LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import type { Lead } from '../domain/lead';
import { Metrics } from '../observability/metrics';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { OutboxAlerts } from './outbox-alerts';
import { OutboxGate } from './outbox-gate';
import type { Outcome, OutboxHandler } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { type AdoptCall, type AdoptStep, nextStep, type PublishCall, type PublishFailureStep, type Retry } from './telegram-answer.policy';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

type PublishForm = PublishCall['form'];

/** What a card's record needs besides where it went: the lead's facts as the card showed them. */
interface CardBase {
  leadId: number;
  requestId: string;
  repeatIds: number[];
  dirtyAt: number | null;
  /** The lead's arrival: the start of outbox_card_latency_seconds. */
  acceptedAt: number;
}

/** A card Telegram accepted: where, in which form, and why not in the full form or in its topic. */
type SentCard = CardBase & {
  chatId: string;
  threadId: number | null;
  messageId: number;
  form: PublishForm;
  refused?: string;
  /** The late lead's fallback message, edited into the card. */
  adopted?: boolean;
  topic?: string;
};

const EVENT = { html: 'published', plain: 'published_plain', minimal: 'published_minimal' } as const;

/**
 * Publishes the cards of stored leads (docs/requirements.md §4.1–§4.5, §12.5): the full card, else the plain-text or
 * the minimal one as the answer policy says, in the leads group of the lead's source and its forum topic (§14.9,
 * §14.10; a closed or deleted topic: the chat's General topic, once alerted). The handler of the outbox's `card` rows.
 */
@Injectable()
export class CardPublisher implements OutboxHandler {
  private readonly logger = new Logger('Outbox');

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
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** A lead's card, unless it has one already (adopted, or published by an earlier row). */
  async handle(row: OutboxRow): Promise<Outcome> {
    const lead = await this.repo.findLead(row.lead_id);
    if (!lead || lead.published_at !== null) return { done: 'already published' };
    const chatId = await this.chats.leadsChatId();
    if (!chatId) return { defer: this.clock.now(), stop: true };
    const target = (await this.chats.cardTarget(lead)) ?? { chatId, threadId: null, route: null };
    return this.publish(lead, row.attempts, target);
  }

  private async publish(lead: Lead, attempts: number, target: CardTarget, afterMigration = false): Promise<Outcome> {
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = await this.cards.cardFor(lead, repeats);
    const base: CardBase = {
      leadId: lead.id,
      requestId: lead.request_id,
      repeatIds: repeats.map((r) => r.id),
      dirtyAt: lead.card_dirty_at,
      acceptedAt: lead.received_at ?? lead.created_at,
    };
    if (lead.fallback_state === 'pending') {
      const adopted = await this.adopt(lead, attempts, target.chatId, card, base);
      if (adopted !== 'publish_new') return adopted;
      lead = { ...lead, fallback_state: 'answer' };
    }
    this.metrics.inc('outbox_publish_attempts_total');
    let form: PublishForm = 'html';
    let refused: string | undefined;
    let to = target;
    let topic: string | undefined;
    for (;;) {
      const sent = await this.send(to, form, form === 'minimal' ? this.cards.minimalCardFor(lead) : card);
      if (sent.ok) {
        return this.sent({ ...base, chatId: to.chatId, threadId: to.threadId, topic, form, messageId: sent.value.message_id, refused });
      }
      const inGeneral = to.threadId === null;
      const next: PublishFailureStep = nextStep({ action: 'publish', form, afterMigration, inGeneral }, sent, attempts);
      switch (next.step) {
        case 'flood_pause':
          return this.flood(lead, next.pauseMs, sent.description, form === 'html');
        case 'follow_migration':
          await this.chats.migrated(to.chatId, next.newChatId);
          return this.publish(lead, attempts, { ...to, chatId: next.newChatId }, true);
        case 'general_topic':
          // The topic is closed or deleted; the card goes into the chat's General topic at once.
          this.chats.topicGone(to.chatId, to.threadId, sent.description, this.t.alerts.topicCard(lead.id));
          topic = `topic ${to.threadId} refused (${sent.description}): the card is in the chat's General topic`;
          to = { ...to, threadId: null };
          break;
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

  /**
   * A late lead's fallback message in the leads group becomes its card, edited in as a publication (full, plain,
   * minimal), so the group keeps one message. 'publish_new' when it cannot (another chat, another bot's, deleted,
   * refused). A 5xx or a timeout is a failure on the card's schedule; the next attempt tries the edit again.
   */
  private async adopt(lead: Lead, attempts: number, chatId: string, card: Card, base: CardBase): Promise<Outcome | 'publish_new'> {
    const messageId = lead.fallback_message_id!;
    if (lead.fallback_chat_id !== chatId) {
      await this.notAdopted(lead, `the fallback message is in chat ${lead.fallback_chat_id}, the cards go to chat ${chatId}`);
      return 'publish_new';
    }
    // Only the secret's holders send `late`, but a wrong message id must never take another lead's card away.
    const owner = await this.repo.cardAt(chatId, messageId);
    if (owner !== undefined && owner !== lead.id) {
      await this.notAdopted(lead, `message ${messageId} is the card of lead #${owner}, not a fallback message`, 'refused');
      return 'publish_new';
    }
    this.metrics.inc('outbox_publish_attempts_total');
    let form: AdoptCall['form'] = 'html';
    let refused: string | undefined;
    for (;;) {
      const shown = form === 'minimal' ? this.cards.minimalCardFor(lead) : card;
      const plain = form === 'plain';
      const answer = await this.telegram.edit(chatId, messageId, plain ? shown.plain : shown.html, !plain, shown.keyboard);
      const next: AdoptStep = nextStep({ action: 'adopt', form }, answer, attempts);
      const description = answer.ok ? '' : answer.description;
      switch (next.step) {
        case 'success':
          // The fallback message's topic is where the landing put it: unknown here, and replies follow it there.
          return this.sent({ ...base, chatId, threadId: null, form, messageId, refused, adopted: true });
        case 'flood_pause':
          return this.flood(lead, next.pauseMs, description, form === 'html');
        case 'plain_text':
        case 'minimal_card':
          form = next.step === 'plain_text' ? 'plain' : 'minimal';
          refused = description;
          break;
        case 'publish_new':
          await this.notAdopted(lead, `Telegram refused to edit the fallback message (${description})`);
          return 'publish_new';
        case 'retry':
          return this.failed(lead, { ok: false, kind: 'failed', description }, next);
      }
    }
  }

  private async notAdopted(lead: Lead, why: string, next: 'answer' | 'refused' = 'answer'): Promise<void> {
    await this.repo.fallbackNotAdopted(lead.id, next);
    const after = next === 'answer' ? ', and the fallback message gets a reply' : '; that message is left alone';
    const detail = `${why}: the card goes out as a new message${after}`;
    await this.events.record(lead.id, 'fallback_not_adopted', this.clock.now(), detail);
    this.logger.warn({ msg: 'fallback message not adopted as the card', lead_number: lead.id, request_id: lead.request_id, why });
  }

  /** Flood control: the lead keeps its place and waits for the pause; the trace tells of a pause on the card's first try. */
  private async flood(lead: Lead, pauseMs: number, description: string, firstTry: boolean): Promise<Outcome> {
    const until = await this.gate.flood(pauseMs, description);
    const detail = `flood control: retry after ${pauseMs / 1000} s`;
    // A fallback form's pause only moves the lead's time.
    const record = firstTry ? () => this.events.record(lead.id, 'publish_deferred', this.clock.now(), detail) : undefined;
    return { defer: until, error: description, stop: true, record };
  }

  private send(to: CardTarget, form: PublishForm, card: Card) {
    const plain = form === 'plain';
    const { chatId, threadId } = to;
    return this.telegram.send({ chatId, threadId, text: plain ? card.plain : card.html, html: !plain, keyboard: card.keyboard });
  }

  /** Telegram has the card: its record (the runner keeps it until it is written, so the card is never sent twice). */
  private sent(card: SentCard): Outcome {
    const { leadId, chatId, threadId, messageId, form, refused, adopted } = card;
    // The topic, when the card is in one, and why not, when it should have been.
    const where =
      `chat ${chatId}` +
      (threadId !== null ? `, topic ${threadId}` : '') +
      `, message ${messageId}` +
      (card.topic ? ` (${card.topic})` : '');
    const detail =
      (adopted ? 'the fallback message is the card now: ' : '') +
      { html: where, plain: `HTML refused (${refused}); ${where}`, minimal: `card refused (${refused}); minimal card in ${where}` }[form];
    const sentAt = this.clock.now();
    const record = async () => {
      const format = form === 'plain' ? 'plain' : 'html';
      const { repeatIds, dirtyAt } = card;
      await this.repo.markPublished({ leadId, chatId, threadId, messageId, format, repeatIds, dirtyAt, now: sentAt, adopted });
      this.metrics.inc('outbox_published_total');
      this.metrics.observe('outbox_card_latency_seconds', (sentAt - card.acceptedAt) / 1000);
      const log = { lead_number: leadId, request_id: card.requestId, message_id: messageId };
      if (form === 'html') this.logger.log({ msg: adopted ? 'fallback message adopted as the card' : 'card published', ...log });
      if (form === 'plain') {
        this.logger.warn({ msg: 'card published as plain text', ...log, error: refused });
        this.alerts.plainCard(leadId, refused ?? '');
      }
      if (form === 'minimal') {
        this.logger.warn({ msg: 'card published in minimal form: the full card is too long', ...log, error: refused });
        this.alerts.minimalCard(leadId, refused ?? '');
      }
      await this.events.record(leadId, adopted ? 'fallback_adopted' : EVENT[form], this.clock.now(), detail);
    };
    return { done: adopted ? 'adopted' : 'sent', record };
  }

  private failed(lead: Lead, failure: TelegramFailure, next: Retry): Outcome {
    const attempts = next.failures;
    const nextAt = this.clock.now() + next.delayMs;
    const record = async () => {
      const detail = `attempt ${attempts}: ${failure.description}; next attempt at ${new Date(nextAt).toISOString()}`;
      await this.events.record(lead.id, 'publish_failed', this.clock.now(), detail);
      this.metrics.inc('outbox_publish_failures_total');
      const log = { lead_number: lead.id, request_id: lead.request_id, attempt: attempts, error: failure.description };
      this.logger.warn({ msg: 'publish attempt failed', ...log });
      if (next.alert) this.alerts.publishFailing(lead.id, attempts, failure.description);
    };
    return { failed: { attempts, nextAt, error: failure.description }, record };
  }
}
