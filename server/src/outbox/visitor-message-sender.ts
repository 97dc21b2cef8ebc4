import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { type LeadMessage, LeadMessagesRepository } from '../conversations/lead-messages.repository';
import type { Lead } from '../domain/lead';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { LeadsRepository } from '../repositories/leads.repository';
import type { OutboxRow } from '../repositories/outbox.repository';
import { cutTo, TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramResult } from '../telegram/telegram-result';
import { ChatPacer } from './chat-pacer';
import { OutboxGate } from './outbox-gate';
import type { Outcome, OutboxHandler } from './outcome';
import { nextStep } from './telegram-answer.policy';

const MAX_TEXT = 4096;
const MAX_CAPTION = 1024;
/** The media Telegram lets a copy carry a caption with. */
const CAPTIONED = new Set(['photo', 'document', 'voice', 'video']);

/**
 * The outbox's `visitor_message` rows: a visitor's message relayed into the group as a reply to the lead's card (in
 * its topic when it has one). With personal data on the card: a text with a header line naming the visitor, a photo,
 * a document, a voice message or a video copied with the header as its caption, anything else (a sticker) named in a
 * text. With LEADS_CARD_PII=0 only a notice without the text (the inbox shows it). Failures follow the repeat pings'
 * schedule (given up after the 5th), a 429 the flood pause.
 */
@Injectable()
export class VisitorMessageSender implements OutboxHandler {
  private readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly messages: LeadMessagesRepository,
    private readonly leads: LeadsRepository,
    private readonly telegram: TelegramGateway,
    private readonly gate: OutboxGate,
    private readonly pacer: ChatPacer,
    private readonly clock: Clock,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async handle(row: OutboxRow): Promise<Outcome> {
    const msg = row.message_id === null ? undefined : await this.messages.find(row.message_id);
    // Erased with its lead's contact, or sent already.
    if (!msg || msg.state !== 'queued') return { done: msg ? msg.state : 'no message' };
    const lead = await this.leads.findLead(msg.lead_id);
    if (!lead || lead.anonymised_at !== null) return { done: 'skipped', record: () => this.messages.failed(msg.id, 'the lead is erased') };
    // No card in the group now (gone, published anew): behind the new card.
    if (lead.chat_id === null || lead.message_id === null || lead.published_at === null) return { requeue: true };
    const slot = this.pacer.slot(lead.chat_id);
    if (slot > this.clock.now()) return { defer: slot };
    let answer = await this.relay(msg, lead, lead.card_thread_id, lead.message_id);
    if (!answer.ok) {
      const step = nextStep({ action: 'ping', form: 'reply' }, answer, row.attempts);
      // The card's topic is closed: into the chat's General topic, on its own.
      if (step.step === 'general_topic') answer = await this.relay(msg, lead, null, undefined);
    }
    this.pacer.sent(lead.chat_id);
    if (answer.ok) {
      const copy = { chatId: lead.chat_id, messageId: answer.value.message_id };
      this.logger.log({ msg: 'visitor message relayed', lead_number: lead.id, message: msg.id });
      return { done: 'sent', record: () => this.messages.delivered(msg.id, copy) };
    }
    const step = nextStep({ action: 'ping', form: 'reply', inGeneral: true }, answer, row.attempts);
    if (step.step === 'flood_pause') return { defer: await this.gate.flood(step.pauseMs, answer.description), stop: true };
    this.logger.warn({ msg: 'visitor message not relayed', lead_number: lead.id, attempt: step.failures, error: answer.description });
    if (step.giveUp) return { done: 'gave_up', attempts: step.failures, record: () => this.messages.failed(msg.id, answer.description) };
    return { failed: { attempts: step.failures, nextAt: this.clock.now() + step.delayMs, error: answer.description } };
  }

  private relay(
    msg: LeadMessage,
    lead: Lead,
    threadId: number | null,
    replyTo: number | undefined,
  ): Promise<TelegramResult<{ message_id: number }>> {
    const chatId = lead.chat_id!;
    if (!this.config.leads.cardPii)
      return this.telegram.send({ chatId, threadId, text: this.t.group.visitorNotice(lead.id), html: false, replyTo });
    const header = this.t.group.visitorHeader(lead.id, msg.author_name ?? '—');
    const text = msg.text ?? '';
    if (msg.media !== null && CAPTIONED.has(msg.media) && msg.tg_chat_id !== null && msg.tg_message_id !== null) {
      const caption = cutTo(text ? `${header}\n${text}` : header, MAX_CAPTION);
      return this.telegram.copyMessage({ chatId, fromChatId: msg.tg_chat_id, messageId: msg.tg_message_id, threadId, replyTo, caption });
    }
    const body = msg.media !== null ? `[${msg.media}]${text ? ` ${text}` : ''}` : text;
    return this.telegram.send({ chatId, threadId, text: cutTo(`${header}\n${body}`, MAX_TEXT), html: false, replyTo });
  }
}
