import { Injectable } from '@nestjs/common';
import type { CardTarget } from '../chats/leads-chat.service';
import type { Lead } from '../domain/lead';
import type { TelegramResult } from '../telegram/telegram-result';
import type { Outcome } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { MINIMAL_CARD_ALERT_INTERVAL_MS, PUBLISH_ALERT_INTERVAL_MS } from './retry-schedule';
import { type NextStep, nextStep, type OutboxCall, type PublishCall, type Retry } from './telegram-answer.policy';
import { type LogLine, TelegramHandler, type TraceLine } from './telegram-handler';

/** A card Telegram accepted: the lead as it showed it, where, in which form, and why not another. */
interface SentCard {
  lead: Lead;
  repeatIds: number[];
  chatId: string;
  threadId: number | null;
  messageId: number;
  form: PublishCall['form'];
  refused?: string;
  adopted: boolean;
  topic?: string;
}

const EVENT = { html: 'published', plain: 'published_plain', minimal: 'published_minimal' } as const;

/**
 * `card` rows (docs/requirements.md §4.1–§4.5, §12.5, §14.9, §14.10): the full, plain-text or minimal card in the lead's
 * group and topic; a late lead's fallback message in that group is edited into the card, so the group keeps one message.
 */
@Injectable()
export class CardPublisher extends TelegramHandler {
  async handle(row: OutboxRow): Promise<Outcome> {
    const lead = await this.repo.findLead(row.lead_id);
    if (!lead || lead.published_at !== null) return { done: 'already published' };
    const chatId = await this.chats.leadsChatId();
    if (!chatId) return { defer: this.clock.now(), stop: true };
    const target = (await this.chats.cardTarget(lead)) ?? { chatId, threadId: null, route: null };
    return this.publish(lead, row.attempts, target);
  }

  private async publish(lead: Lead, attempts: number, to: CardTarget, afterMigration = false): Promise<Outcome> {
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = await this.cards.cardFor(lead, repeats);
    let adopting = lead.fallback_state === 'pending' && (await this.adoptable(lead, to.chatId));
    if (lead.fallback_state === 'pending' && !adopting) lead = { ...lead, fallback_state: 'answer' };
    this.metrics.inc('outbox_publish_attempts_total');
    let form: PublishCall['form'] = 'html';
    let refused: string | undefined;
    let topic: string | undefined;
    for (;;) {
      const shown = form === 'minimal' ? this.cards.minimalCardFor(lead) : card;
      const plain = form === 'plain';
      const text = plain ? shown.plain : shown.html;
      let answer: TelegramResult<unknown>;
      let messageId = lead.fallback_message_id!;
      if (adopting) answer = await this.telegram.edit(to.chatId, messageId, text, !plain, shown.keyboard);
      else {
        const sent = await this.telegram.send({ chatId: to.chatId, threadId: to.threadId, text, html: !plain, keyboard: shown.keyboard });
        if (sent.ok) messageId = sent.value.message_id;
        answer = sent;
      }
      const call: OutboxCall = adopting
        ? { action: 'adopt', form }
        : { action: 'publish', form, afterMigration, inGeneral: to.threadId === null };
      const next: NextStep = nextStep(call, answer, attempts);
      const description = answer.ok ? '' : answer.description;
      switch (next.step) {
        case 'success': {
          const repeatIds = repeats.map((r) => r.id);
          // An adopted fallback message's topic is where the landing put it: unknown here, and replies follow it there.
          const threadId = adopting ? null : to.threadId;
          return this.sent({ lead, repeatIds, chatId: to.chatId, threadId, messageId, form, refused, adopted: adopting, topic });
        }
        case 'flood_pause':
          return this.flood(lead, next.pauseMs, description, form === 'html');
        case 'follow_migration':
          await this.chats.migrated(to.chatId, next.newChatId);
          return this.publish(lead, attempts, { ...to, chatId: next.newChatId }, true);
        case 'general_topic':
          // The topic is closed or deleted; the card goes into the chat's General topic at once.
          this.chats.topicGone(to.chatId, to.threadId, description, this.t.alerts.topicCard(lead.id));
          topic = `topic ${to.threadId} refused (${description}): the card is in the chat's General topic`;
          to = { ...to, threadId: null };
          break;
        case 'plain_text':
        case 'minimal_card':
          // Another form of the same card, tried once (§4.4, §12.5).
          form = next.step === 'plain_text' ? 'plain' : 'minimal';
          refused = description;
          break;
        case 'publish_new':
          await this.notAdopted(lead, `Telegram refused to edit the fallback message (${description})`);
          [adopting, lead, form, refused] = [false, { ...lead, fallback_state: 'answer' }, 'html', undefined];
          this.metrics.inc('outbox_publish_attempts_total');
          break;
        case 'retry':
          return this.failed(lead, description, next);
        default:
          throw new Error(`no ${next.step} for a card`);
      }
    }
  }

  /** Not in another chat, nor another lead's card: a wrong message id must never take another lead's card away. */
  private async adoptable(lead: Lead, chatId: string): Promise<boolean> {
    const messageId = lead.fallback_message_id!;
    if (lead.fallback_chat_id !== chatId) {
      await this.notAdopted(lead, `the fallback message is in chat ${lead.fallback_chat_id}, the cards go to chat ${chatId}`);
      return false;
    }
    const owner = await this.repo.cardAt(chatId, messageId);
    if (owner === undefined || owner === lead.id) return true;
    await this.notAdopted(lead, `message ${messageId} is the card of lead #${owner}, not a fallback message`, 'refused');
    return false;
  }

  private async notAdopted(lead: Lead, why: string, next: 'answer' | 'refused' = 'answer'): Promise<void> {
    const after = next === 'answer' ? ', and the fallback message gets a reply' : '; that message is left alone';
    const trace: TraceLine = [lead.id, 'fallback_not_adopted', `${why}: the card goes out as a new message${after}`];
    const log: LogLine = ['warn', 'fallback message not adopted as the card', { request_id: lead.request_id, why }];
    await this.recorded(() => this.repo.fallbackNotAdopted(lead.id, next), trace, log)();
  }

  /** The lead keeps its place and waits for the pause; the trace tells of a pause on the card's first try. */
  private async flood(lead: Lead, pauseMs: number, description: string, firstTry: boolean): Promise<Outcome> {
    const until = await this.gate.flood(pauseMs, description);
    const detail = `flood control: retry after ${pauseMs / 1000} s`;
    const record = firstTry ? this.recorded(null, [lead.id, 'publish_deferred', detail]) : undefined;
    return { defer: until, error: description, stop: true, record };
  }

  private sent(card: SentCard): Outcome {
    const { lead, repeatIds, chatId, threadId, messageId, form, refused, adopted } = card;
    const leadId = lead.id;
    const topic = card.topic ? ` (${card.topic})` : '';
    const where = `chat ${chatId}${threadId !== null ? `, topic ${threadId}` : ''}, message ${messageId}${topic}`;
    const detail =
      (adopted ? 'the fallback message is the card now: ' : '') +
      { html: where, plain: `HTML refused (${refused}); ${where}`, minimal: `card refused (${refused}); minimal card in ${where}` }[form];
    const sentAt = this.clock.now();
    const record = async () => {
      const format = form === 'plain' ? 'plain' : 'html';
      const dirtyAt = lead.card_dirty_at;
      await this.repo.markPublished({ leadId, chatId, threadId, messageId, format, repeatIds, dirtyAt, now: sentAt, adopted });
      this.metrics.inc('outbox_published_total');
      this.metrics.observe('outbox_card_latency_seconds', (sentAt - (lead.received_at ?? lead.created_at)) / 1000);
      const log = { lead_number: leadId, request_id: lead.request_id, message_id: messageId };
      if (form === 'html') this.logger.log({ msg: adopted ? 'fallback message adopted as the card' : 'card published', ...log });
      if (form === 'plain') {
        this.logger.warn({ msg: 'card published as plain text', ...log, error: refused });
        this.alert(`card_plain:${leadId}`, PUBLISH_ALERT_INTERVAL_MS, this.t.alerts.plainCard(leadId, refused ?? ''));
      }
      if (form === 'minimal') {
        this.logger.warn({ msg: 'card published in minimal form: the full card is too long', ...log, error: refused });
        this.alert(`card_minimal:${leadId}`, MINIMAL_CARD_ALERT_INTERVAL_MS, this.t.alerts.minimalCard(leadId, refused ?? ''));
      }
      await this.repo.recordEvent(leadId, adopted ? 'fallback_adopted' : EVENT[form], this.clock.now(), detail);
    };
    return { done: adopted ? 'adopted' : 'sent', record };
  }

  private failed(lead: Lead, error: string, next: Retry): Outcome {
    const attempts = next.failures;
    const nextAt = this.clock.now() + next.delayMs;
    const record = async () => {
      const detail = `attempt ${attempts}: ${error}; next attempt at ${new Date(nextAt).toISOString()}`;
      await this.repo.recordEvent(lead.id, 'publish_failed', this.clock.now(), detail);
      this.metrics.inc('outbox_publish_failures_total');
      this.logger.warn({ msg: 'publish attempt failed', lead_number: lead.id, request_id: lead.request_id, attempt: attempts, error });
      // Cards keep failing (§4.2): one alert per 30 minutes whichever lead it is.
      if (next.alert) this.alert('publish_failing', PUBLISH_ALERT_INTERVAL_MS, this.t.alerts.publishFailing(lead.id, attempts, error));
    };
    return { failed: { attempts, nextAt, error }, record };
  }
}
