import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { type FallbackAnswerEnd, type FallbackToAnswer, LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { Step } from './card-publisher';
import { OutboxGate } from './outbox-gate';
import { BATCH_SIZE } from './retry-schedule';
import { type AnswerFailureStep, nextStep } from './telegram-answer.policy';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** A reply Telegram accepted whose record is not in the database yet. */
export interface UnrecordedAnswer {
  of: FallbackToAnswer['of'];
  id: number;
  leadId: number;
  requestId: string;
  detail: string;
}

/** The reply on a fallback message: the lead's number, or the lead it repeats. No personal data. */
export function fallbackAnswerText(t: Messages, f: Pick<FallbackToAnswer, 'of' | 'leadId'>): string {
  return f.of === 'lead' ? t.group.fallbackAnswer(f.leadId) : t.group.fallbackAnswerRepeat(f.leadId);
}

/**
 * A late lead's fallback message that did not become its card, and a late repeat's, get a reply saying the
 * request is in the database — so whoever looks at the group knows it needs no copying by hand. Sent only as a reply:
 * a deleted message gets nothing, and a chat that refuses it (the bot is not there) leaves the message alone. The
 * retry schedule, flood control and the memory of sent replies (docs/requirements.md §4.2, §4.3, §12.7) as for a
 * repeat's ping; the 5th failure gives up.
 */
@Injectable()
export class FallbackAnswerer {
  private readonly logger = new Logger('Outbox');
  private readonly unrecorded = new Map<string, UnrecordedAnswer>();

  constructor(
    private readonly repo: LeadsRepository,
    private readonly telegram: TelegramGateway,
    private readonly events: LeadEventsRepository,
    private readonly clock: Clock,
    private readonly gate: OutboxGate,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  unrecordedAnswers(): UnrecordedAnswer[] {
    return [...this.unrecorded.values()];
  }

  async recordUnrecorded(): Promise<void> {
    for (const answer of [...this.unrecorded.values()]) await this.record(answer);
  }

  /** Up to 10 due replies; a flood pause ends the step. */
  async answerDue(): Promise<void> {
    for (const f of await this.repo.dueFallbackAnswers(this.clock.now(), BATCH_SIZE)) {
      if (this.gate.stopped || !this.gate.ready()) return;
      if ((await this.answer(f)) === 'flood') return;
    }
  }

  private async answer(f: FallbackToAnswer): Promise<Step> {
    const known = this.unrecorded.get(`${f.of}:${f.id}`);
    if (known) {
      await this.record(known);
      return 'done';
    }
    const owner = await this.repo.cardAt(f.chatId, f.messageId);
    if (owner !== undefined) return this.end(f, 'refused', `message ${f.messageId} is the card of lead #${owner}, not a fallback message`);
    const sent = await this.telegram.send({
      chatId: f.chatId,
      text: fallbackAnswerText(this.t, f),
      html: false,
      replyTo: f.messageId,
      replyOnly: true,
    });
    if (sent.ok) {
      const detail = `reply ${sent.value.message_id} to the fallback message (chat ${f.chatId}, message ${f.messageId})`;
      const entry: UnrecordedAnswer = { of: f.of, id: f.id, leadId: f.leadId, requestId: f.requestId, detail };
      this.unrecorded.set(`${f.of}:${f.id}`, entry);
      await this.record(entry);
      return 'done';
    }
    const next: AnswerFailureStep = nextStep({ action: 'answer', form: 'reply' }, sent, f.attempts);
    switch (next.step) {
      case 'flood_pause':
        return this.gate.flood(next.pauseMs, sent.description);
      case 'leave': {
        const end: FallbackAnswerEnd = sent.kind === 'gone' ? 'gone' : 'refused';
        const why =
          end === 'gone' ? 'the fallback message is deleted: nothing to answer' : `Telegram refused the reply (${sent.description})`;
        return this.end(f, end, `${why}; the message is left as it is`);
      }
      case 'retry':
        if (next.giveUp) return this.end(f, 'gave_up', `after ${next.failures} failures: ${sent.description}`);
        await this.repo.markFallbackAnswerFailed(f.of, f.id, next.failures, this.clock.now() + next.delayMs);
        await this.event(f, 'fallback_answer_failed', `attempt ${next.failures}: ${sent.description}`);
        this.logger.warn({
          msg: 'reply to the fallback message failed',
          lead_number: f.leadId,
          attempt: next.failures,
          error: sent.description,
        });
        return 'done';
    }
  }

  private async end(f: FallbackToAnswer, end: FallbackAnswerEnd, detail: string): Promise<Step> {
    await this.repo.markFallbackAnswered(f.of, f.id, end);
    await this.event(f, 'fallback_left', detail);
    this.logger.warn({ msg: 'fallback message left without a reply', lead_number: f.leadId, request_id: f.requestId, why: detail });
    return 'done';
  }

  private async record(answer: UnrecordedAnswer): Promise<void> {
    await this.repo.markFallbackAnswered(answer.of, answer.id, 'answered');
    this.unrecorded.delete(`${answer.of}:${answer.id}`);
    this.logger.log({ msg: 'fallback message answered', lead_number: answer.leadId, request_id: answer.requestId });
    await this.event(answer, 'fallback_answered', answer.detail);
  }

  private event(
    f: Pick<FallbackToAnswer, 'of' | 'id' | 'leadId'>,
    kind: 'fallback_answered' | 'fallback_answer_failed' | 'fallback_left',
    detail: string,
  ) {
    return this.events.record(f.leadId, kind, this.clock.now(), detail, f.of === 'repeat' ? f.id : null);
  }
}
