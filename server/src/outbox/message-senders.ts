import { Injectable } from '@nestjs/common';
import type { LeadMessage } from '../conversations/lead-messages.repository';
import type { Lead } from '../domain/lead';
import type { OutboxRow } from '../repositories/outbox.repository';
import { cutTo, TELEGRAM_TEXT_MAX } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { hasCard, type Outcome, type PublishedLead } from './outcome';
import { nextStep } from './telegram-answer.policy';
import { TelegramHandler } from './telegram-handler';

/** Telegram's limits for a bot (its FAQ): about one message a second per chat, 30 a second in all. */
const PER_CHAT_INTERVAL_MS = 1_000;
const PER_BOT_PER_SECOND = 30;
const MAX_CAPTION = 1024;
const CAPTIONED = new Set(['photo', 'document', 'voice', 'video']);
const BLOCKED = /bot was blocked by the user/i;

/** The Telegram message a stored one is (a message the inbox wrote has none): the copy's source, the notice's reply. */
const original = (msg: LeadMessage) =>
  msg.tg_chat_id !== null && msg.tg_message_id !== null ? { chatId: msg.tg_chat_id, messageId: msg.tg_message_id } : null;

/**
 * The conversation's rows (docs/architecture.md, "The conversation"): `visitor_message` relayed into the group as a reply
 * to the card, `team_message` to the bound visitor. Sends are spaced out so they never meet a 429, which stops every card.
 */
@Injectable()
export class MessageSender extends TelegramHandler {
  private readonly lastByChat = new Map<string, number>();
  private recent: number[] = [];

  async handle(row: OutboxRow): Promise<Outcome> {
    const msg = row.message_id === null ? undefined : await this.messages.find(row.message_id);
    // Erased with its lead's contact, or sent already.
    if (!msg || msg.state !== 'queued') return { done: msg ? msg.state : 'no message' };
    const lead = await this.repo.findLead(msg.lead_id);
    return row.kind === 'visitor_message' ? this.toGroup(row, msg, lead) : this.toVisitor(row, msg, lead);
  }

  private async toGroup(row: OutboxRow, msg: LeadMessage, lead: Lead | undefined): Promise<Outcome> {
    if (!lead || lead.anonymised_at !== null) return { done: 'skipped', record: () => this.messages.failed(msg.id, 'the lead is erased') };
    // No card in the group now (gone, published anew): behind the new card.
    if (!hasCard(lead)) return { requeue: true };
    const slot = this.slot(lead.chat_id);
    if (slot > this.clock.now()) return { defer: slot };
    let answer = await this.relay(msg, lead, lead.card_thread_id, lead.message_id);
    // The card's topic is closed: into the chat's General topic, on its own.
    if (!answer.ok && nextStep({ action: 'ping', form: 'reply' }, answer, row.attempts).step === 'general_topic') {
      this.chats.topicGone(lead.chat_id, lead.card_thread_id, answer.description, this.t.alerts.topicMessage(lead.id));
      answer = await this.relay(msg, lead, null, undefined);
    }
    this.paced(lead.chat_id);
    if (answer.ok) {
      const copy = { chatId: lead.chat_id, messageId: answer.value.message_id };
      this.logger.log({ msg: 'visitor message relayed', lead_number: lead.id, message: msg.id });
      return { done: 'sent', record: () => this.messages.delivered(msg.id, copy) };
    }
    const step = nextStep({ action: 'ping', form: 'reply', inGeneral: true }, answer, row.attempts);
    if (step.step === 'flood_pause') return this.gate.pause(step.pauseMs, answer.description);
    this.logger.warn({ msg: 'visitor message not relayed', lead_number: lead.id, attempt: step.failures, error: answer.description });
    if (step.giveUp) return { done: 'gave_up', attempts: step.failures, record: () => this.messages.failed(msg.id, answer.description) };
    return this.retryLater(step, answer.description);
  }

  private relay(msg: LeadMessage, lead: PublishedLead, threadId: number | null, replyTo: number | undefined) {
    const chatId = lead.chat_id;
    if (!this.config.leads.cardPii)
      return this.telegram.send({ chatId, threadId, text: this.t.group.visitorNotice(lead.id), html: false, replyTo });
    const header = this.t.group.visitorHeader(lead.id, msg.author_name ?? '—');
    const text = msg.text ?? '';
    const from = original(msg);
    if (msg.media !== null && CAPTIONED.has(msg.media) && from) {
      const caption = cutTo(text ? `${header}\n${text}` : header, MAX_CAPTION, this.t.group.cut);
      return this.telegram.copyMessage({ chatId, fromChatId: from.chatId, messageId: from.messageId, threadId, replyTo, caption });
    }
    const body = msg.media !== null ? `${this.t.group.media[msg.media]}${text ? ` ${text}` : ''}` : text;
    const cut = cutTo(`${header}\n${body}`, TELEGRAM_TEXT_MAX, this.t.group.cut);
    return this.telegram.send({ chatId, threadId, text: cut, html: false, replyTo });
  }

  private async toVisitor(row: OutboxRow, msg: LeadMessage, lead: Lead | undefined): Promise<Outcome> {
    const binding = await this.messages.bindingOf(msg.lead_id, msg.to_tg_id);
    if (!binding || !lead || lead.anonymised_at !== null)
      return this.notDelivered(msg, lead, 'no visitor is bound to the lead', this.t.group.why.notBound);
    if (binding.stopped_at !== null)
      return this.notDelivered(msg, lead, 'the visitor stopped the conversation (/stop)', this.t.group.why.stopped);
    const chatId = String(binding.tg_user_id);
    const slot = this.slot(chatId);
    if (slot > this.clock.now()) return { defer: slot };
    const from = original(msg);
    const answer = from
      ? await this.telegram.copyMessage({ chatId, fromChatId: from.chatId, messageId: from.messageId })
      : await this.telegram.send({ chatId, text: msg.text ?? '', html: false });
    this.paced(chatId);
    if (answer.ok) {
      if (from) {
        const reaction = [{ type: 'emoji' as const, emoji: '👍' as const }];
        const reacted = await this.telegram.call('setMessageReaction', { chat_id: from.chatId, message_id: from.messageId, reaction });
        if (!reacted.ok) this.logger.warn({ msg: 'delivery reaction failed', lead_number: msg.lead_id, error: reacted.description });
      }
      // Written in the inbox: the group sees the answer under the card (best effort, as the not-delivered notice).
      const shown = !from && hasCard(lead) ? await this.showInGroup(lead, msg) : null;
      const copy = { chatId, messageId: answer.value.message_id };
      this.logger.log({ msg: 'team message delivered', lead_number: msg.lead_id, message: msg.id });
      // Delivered: whatever block the binding is marked with is over (unblocked in Telegram's settings, without a word).
      const unblocked = binding.blocked_at !== null;
      const record = async () => {
        await this.messages.delivered(msg.id, copy);
        if (shown) await this.repo.noticeSent(msg.lead_id, shown.chatId, shown.messageId);
        if (unblocked) await this.messages.unblocked(binding.tg_user_id, this.clock.now());
      };
      return { done: 'sent', record };
    }
    return this.failedSend(row, msg, lead, answer, binding.tg_user_id);
  }

  private async failedSend(row: OutboxRow, msg: LeadMessage, lead: Lead, answer: TelegramFailure, to: number): Promise<Outcome> {
    const step = nextStep({ action: 'ping', form: 'reply', inGeneral: true }, answer, row.attempts);
    if (step.step === 'flood_pause') return this.gate.pause(step.pauseMs, answer.description);
    this.logger.warn({ msg: 'team message not delivered', lead_number: msg.lead_id, error: answer.description });
    if (BLOCKED.test(answer.description)) {
      const outcome = await this.notDelivered(msg, lead, 'the visitor blocked the bot', this.t.group.why.blocked);
      return { ...outcome, record: async () => (await outcome.record?.(), this.messages.blocked(msg.lead_id, to, this.clock.now())) };
    }
    if (answer.kind !== 'failed' && answer.kind !== 'no_bot')
      return this.notDelivered(msg, lead, `Telegram refused: ${answer.description}`, this.t.group.why.refused(answer.description));
    if (step.giveUp) {
      const error = `gave up after ${step.failures} failures: ${answer.description}`;
      return { ...(await this.notDelivered(msg, lead, error, this.t.group.why.gaveUp(answer.description))), attempts: step.failures };
    }
    return this.retryLater(step, answer.description);
  }

  /** The inbox's answer shown under the card: where, or null (refused). */
  private async showInGroup(lead: PublishedLead, msg: LeadMessage): Promise<{ chatId: string; messageId: number } | null> {
    const text = cutTo(this.t.group.inboxAnswer(lead.id, msg.author_name ?? '—', msg.text ?? ''), TELEGRAM_TEXT_MAX);
    const shown = await this.telegram.send({
      chatId: lead.chat_id,
      threadId: lead.card_thread_id,
      text,
      html: false,
      replyTo: lead.message_id,
    });
    if (shown.ok) return { chatId: lead.chat_id, messageId: shown.value.message_id };
    this.logger.warn({ msg: 'inbox answer not shown in the group', lead_number: lead.id, error: shown.description });
    return null;
  }

  /** Failed for good: the message says why, and so does the group (best effort: the history keeps it either way). */
  private async notDelivered(msg: LeadMessage, lead: Lead | undefined, error: string, why: string): Promise<Outcome & { done: string }> {
    const from = original(msg);
    const [chatId, replyTo] = from ? [from.chatId, from.messageId] : [lead?.chat_id ?? null, lead?.message_id ?? undefined];
    let notice: { chatId: string; messageId: number } | null = null;
    if (chatId !== null) {
      const threadId = from ? null : lead?.card_thread_id;
      const text = from
        ? this.t.group.notDelivered(why)
        : cutTo(this.t.group.notDeliveredFromInbox(why, msg.author_name ?? '—', msg.text ?? ''), TELEGRAM_TEXT_MAX);
      const told = await this.telegram.send({ chatId, text, html: false, replyTo, threadId });
      if (!told.ok) this.logger.warn({ msg: 'not-delivered notice failed', lead_number: msg.lead_id, error: told.description });
      else notice = { chatId, messageId: told.value.message_id };
    }
    const record = async () => {
      await this.messages.failed(msg.id, error);
      if (notice) await this.repo.noticeSent(msg.lead_id, notice.chatId, notice.messageId);
    };
    return { done: 'failed', record };
  }

  /** When a send into `chatId` may go: now, or the time it must wait for. */
  private slot(chatId: string): number {
    const now = this.clock.now();
    this.recent = this.recent.filter((at) => at > now - 1_000);
    let at = now;
    const last = this.lastByChat.get(chatId);
    if (last !== undefined) at = Math.max(at, last + PER_CHAT_INTERVAL_MS);
    if (this.recent.length >= PER_BOT_PER_SECOND) at = Math.max(at, this.recent[this.recent.length - PER_BOT_PER_SECOND] + 1_000);
    return at;
  }

  private paced(chatId: string): void {
    const now = this.clock.now();
    this.lastByChat.set(chatId, now);
    this.recent.push(now);
    if (this.lastByChat.size > 10_000) {
      for (const [chat, at] of this.lastByChat) if (at <= now - PER_CHAT_INTERVAL_MS) this.lastByChat.delete(chat);
    }
  }
}
