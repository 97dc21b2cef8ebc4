import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { type LeadMessage, LeadMessagesRepository } from '../conversations/lead-messages.repository';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { LeadsRepository } from '../repositories/leads.repository';
import type { OutboxRow } from '../repositories/outbox.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { ChatPacer } from './chat-pacer';
import { OutboxGate } from './outbox-gate';
import type { Outcome, OutboxHandler } from './outcome';
import { REPEAT_MAX_FAILURES, retryDelayMs } from './retry-schedule';

/** Telegram's answer when the visitor blocked the bot (a 403). */
const BLOCKED = /bot was blocked by the user/i;

/** Why a team message did not reach the visitor, as the inbox's `error` shows it (English, as the trace). */
export const NOT_DELIVERED = {
  blocked: 'the visitor blocked the bot',
  stopped: 'the visitor stopped the conversation (/stop)',
  notBound: 'no visitor is bound to the lead',
} as const;

/**
 * The outbox's `team_message` rows: a member's reply (or the inbox's message) sent to the bound visitor by the bot —
 * a copy of the member's message (text, photo, document, voice…), or the inbox's text. Delivered: 👍 on the member's
 * message. Not delivered, for good and said in the group (a reply to the member's message, or to the card): no
 * visitor bound, the visitor sent `/stop`, the visitor blocked the bot (the card says so too), or Telegram refused
 * (a 4xx); a 5xx or a timeout is retried on the repeat pings' schedule and given up after the 5th failure.
 */
@Injectable()
export class TeamMessageSender implements OutboxHandler {
  private readonly logger = new Logger('Outbox');

  constructor(
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
    if (!msg || msg.state !== 'queued') return { done: msg ? msg.state : 'no message' };
    const binding = await this.messages.bindingOf(msg.lead_id);
    const lead = await this.leads.findLead(msg.lead_id);
    if (!binding || !lead || lead.anonymised_at !== null) return this.notDelivered(msg, NOT_DELIVERED.notBound, this.t.group.why.notBound);
    if (binding.stoppedAt !== null) return this.notDelivered(msg, NOT_DELIVERED.stopped, this.t.group.why.stopped);
    const chatId = String(binding.userId);
    const slot = this.pacer.slot(chatId);
    if (slot > this.clock.now()) return { defer: slot };
    const answer =
      msg.tg_chat_id !== null && msg.tg_message_id !== null
        ? await this.telegram.copyMessage({ chatId, fromChatId: msg.tg_chat_id, messageId: msg.tg_message_id })
        : await this.telegram.send({ chatId, text: msg.text ?? '', html: false });
    this.pacer.sent(chatId);
    if (answer.ok) {
      if (msg.tg_chat_id !== null && msg.tg_message_id !== null) {
        const reacted = await this.telegram.react(msg.tg_chat_id, msg.tg_message_id, '👍');
        if (!reacted.ok) this.logger.warn({ msg: 'delivery reaction failed', lead_number: msg.lead_id, error: reacted.description });
      }
      const copy = { chatId, messageId: answer.value.message_id };
      this.logger.log({ msg: 'team message delivered', lead_number: msg.lead_id, message: msg.id });
      return { done: 'sent', record: () => this.messages.delivered(msg.id, copy) };
    }
    return this.failedSend(row, msg, answer);
  }

  private async failedSend(row: OutboxRow, msg: LeadMessage, answer: TelegramFailure): Promise<Outcome> {
    if (answer.kind === 'flood') return { defer: await this.gate.flood(answer.retryAfterSec * 1000, answer.description), stop: true };
    this.logger.warn({ msg: 'team message not delivered', lead_number: msg.lead_id, error: answer.description });
    if (BLOCKED.test(answer.description)) {
      const outcome = await this.notDelivered(msg, NOT_DELIVERED.blocked, this.t.group.why.blocked);
      return { ...outcome, record: async () => (await outcome.record?.(), this.messages.blocked(msg.lead_id, this.clock.now())) };
    }
    if (answer.kind !== 'failed' && answer.kind !== 'no_bot') {
      return this.notDelivered(msg, `Telegram refused: ${answer.description}`, this.t.group.why.refused(answer.description));
    }
    const failures = row.attempts + 1;
    if (failures >= REPEAT_MAX_FAILURES) {
      const error = `gave up after ${failures} failures: ${answer.description}`;
      return { ...(await this.notDelivered(msg, error, this.t.group.why.gaveUp(answer.description))), attempts: failures };
    }
    return { failed: { attempts: failures, nextAt: this.clock.now() + retryDelayMs(failures), error: answer.description } };
  }

  /** Failed for good: the message says why, and so does the group (best effort: the history keeps it either way). */
  private async notDelivered(msg: LeadMessage, error: string, why: string): Promise<Outcome & { done: string }> {
    const text = this.t.group.notDelivered(why);
    const lead = await this.leads.findLead(msg.lead_id);
    const [chatId, replyTo] =
      msg.tg_chat_id !== null && msg.tg_message_id !== null
        ? [msg.tg_chat_id, msg.tg_message_id]
        : [lead?.chat_id ?? null, lead?.message_id ?? undefined];
    if (chatId !== null) {
      const told = await this.telegram.send({
        chatId,
        text,
        html: false,
        replyTo,
        threadId: msg.tg_chat_id === null ? lead?.card_thread_id : null,
      });
      if (!told.ok) this.logger.warn({ msg: 'not-delivered notice failed', lead_number: msg.lead_id, error: told.description });
    }
    return { done: 'failed', record: () => this.messages.failed(msg.id, error) };
  }
}
