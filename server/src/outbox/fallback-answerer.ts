import { Injectable } from '@nestjs/common';
import type { FallbackAnswerEnd } from '../repositories/leads.repository';
import type { Outcome } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { nextStep } from './telegram-answer.policy';
import { type LogLine, TelegramHandler, type TraceLine } from './telegram-handler';

/** A fallback message waiting for its reply: a late lead's whose card went out anew, or a late repeat's (`of`: whose row `id` is). */
type Fallback = { of: 'lead' | 'repeat'; id: number; leadId: number; requestId: string };

/**
 * `fallback_reply` rows: a fallback message that did not become a card gets a reply saying the request is stored, so
 * nobody copies it by hand; only as a reply (a deleted or refused one is left alone). Retried as a repeat's ping.
 */
@Injectable()
export class FallbackAnswerer extends TelegramHandler {
  async handle(row: OutboxRow): Promise<Outcome> {
    const lead = await this.repo.findLead(row.lead_id);
    const own = row.repeat_id === null ? lead : await this.repo.findRepeat(row.repeat_id);
    if (!lead || own?.fallback_state !== 'answer') return { done: 'nothing to answer' };
    // The reply names the lead's number once its card is in the group: it waits behind the card published anew.
    if (lead.published_at === null) return { requeue: true };
    const f: Fallback = { of: row.repeat_id === null ? 'lead' : 'repeat', id: own.id, leadId: lead.id, requestId: own.request_id };
    const [chatId, messageId] = [own.fallback_chat_id!, own.fallback_message_id!];
    const owner = await this.repo.cardAt(chatId, messageId);
    if (owner !== undefined) return this.end(f, 'refused', `message ${messageId} is the card of lead #${owner}, not a fallback message`);
    const sent = await this.telegram.send({
      chatId,
      // The lead's number, or the lead it repeats; no personal data.
      text: f.of === 'lead' ? this.t.group.fallbackAnswer(f.leadId) : this.t.group.fallbackAnswerRepeat(f.leadId),
      html: false,
      replyTo: messageId,
      replyOnly: true,
    });
    if (sent.ok) {
      const detail = `reply ${sent.value.message_id} to the fallback message (chat ${chatId}, message ${messageId})`;
      const answered = () => this.repo.markFallbackAnswered(f.of, f.id, 'answered');
      const log: LogLine = ['log', 'fallback message answered', { request_id: f.requestId }];
      return { done: 'answered', record: this.recorded(answered, this.trace(f, 'fallback_answered', detail), log) };
    }
    const next = nextStep({ action: 'answer', form: 'reply' }, sent, row.attempts);
    switch (next.step) {
      case 'flood_pause':
        return this.gate.pause(next.pauseMs, sent.description);
      case 'leave': {
        const end: FallbackAnswerEnd = sent.kind === 'gone' ? 'gone' : 'refused';
        const why =
          end === 'gone' ? 'the fallback message is deleted: nothing to answer' : `Telegram refused the reply (${sent.description})`;
        return this.end(f, end, `${why}; the message is left as it is`);
      }
      case 'retry': {
        if (next.giveUp) return this.end(f, 'gave_up', `after ${next.failures} failures: ${sent.description}`, next.failures);
        const failed = { leadId: f.leadId, kind: 'fallback_answer_failed', msg: 'reply to the fallback message failed' } as const;
        return this.retryLater(next, sent.description, { ...failed, repeatId: f.of === 'repeat' ? f.id : null });
      }
    }
  }

  private end(f: Fallback, end: FallbackAnswerEnd, detail: string, attempts?: number): Outcome {
    const left = () => this.repo.markFallbackAnswered(f.of, f.id, end);
    const log: LogLine = ['warn', 'fallback message left without a reply', { request_id: f.requestId, why: detail }];
    return { done: end, attempts, record: this.recorded(left, this.trace(f, 'fallback_left', detail), log) };
  }

  private trace(f: Fallback, kind: 'fallback_answered' | 'fallback_left', detail: string): TraceLine {
    return [f.leadId, kind, detail, f.of === 'repeat' ? f.id : null];
  }
}
