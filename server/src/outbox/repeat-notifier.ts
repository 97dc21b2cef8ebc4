import { Inject, Injectable, Logger } from '@nestjs/common';
import { CardService } from '../cards/card.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import type { Lead } from '../domain/lead';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { Step } from './card-publisher';
import { CardRewriter } from './card-rewriter';
import { OutboxGate } from './outbox-gate';
import { BATCH_SIZE } from './retry-schedule';
import { type FloodPause, nextStep, type Retry } from './telegram-answer.policy';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** A repeat ping Telegram accepted whose "handled" mark is not in the database yet. */
export interface UnrecordedPing {
  repeatId: number;
  leadId: number;
  requestId: string;
  messageId: number;
  detail: string;
}

/**
 * Tells the group about repeats (docs/requirements.md §4.6): the card is edited to show the repeat block, then a short
 * reply without personal data. A sent reply is remembered until it is recorded (§12.7).
 */
@Injectable()
export class RepeatNotifier {
  private readonly logger = new Logger('Outbox');
  private readonly unrecorded = new Map<number, UnrecordedPing>();

  constructor(
    private readonly repo: LeadsRepository,
    private readonly cards: CardService,
    private readonly telegram: TelegramGateway,
    private readonly chats: LeadsChatService,
    private readonly rewriter: CardRewriter,
    private readonly events: LeadEventsRepository,
    private readonly clock: Clock,
    private readonly gate: OutboxGate,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** Pings sent but not recorded yet, for the runner's logs. */
  unrecordedPings(): UnrecordedPing[] {
    return [...this.unrecorded.values()];
  }

  async recordUnrecorded(): Promise<void> {
    for (const ping of [...this.unrecorded.values()]) await this.record(ping);
  }

  /** Up to 10 due repeats; a flood pause ends the step. */
  async notifyDue(): Promise<void> {
    const due = await this.repo.dueRepeats(this.clock.now(), BATCH_SIZE);
    for (const repeat of due) {
      if (this.gate.stopped || !this.gate.ready()) return;
      if (repeat.status === 'spam' || repeat.anonymised_at !== null) {
        // "A repeat of a lead that is spam or anonymised is only marked as handled."
        await this.repo.markRepeatHandled(repeat.id, 'skipped', this.clock.now());
        const why = repeat.status === 'spam' ? 'lead is spam' : 'lead is anonymised';
        await this.events.record(repeat.lead_id, 'repeat_skipped', this.clock.now(), why, repeat.id);
        continue;
      }
      const lead = await this.repo.findLead(repeat.lead_id);
      if (!lead || lead.chat_id === null || lead.message_id === null) continue;
      const step = await this.notify(repeat.id, repeat.notify_attempts, lead);
      if (step === 'flood') return;
    }
  }

  private async notify(repeatId: number, attempts: number, lead: Lead): Promise<Step> {
    const unrecorded = this.unrecorded.get(repeatId);
    if (unrecorded) {
      await this.record(unrecorded);
      return 'done';
    }
    const card = this.cards.cardFor(lead, await this.repo.repeatsOf(lead.id));
    const { answer: edited, next, minimal } = await this.rewriter.editCard('ping', lead, card, attempts);
    const description = edited.ok ? '' : edited.description;
    switch (next.step) {
      case 'success': // "message is not modified" too: the card already shows this repeat
        break;
      case 'flood_pause':
        return this.gate.flood(next.pauseMs, description);
      case 'republish':
        await this.repo.republish(lead.id, this.clock.now(), description);
        await this.events.record(lead.id, 'card_gone', this.clock.now(), `${description}; a new card will be published`);
        this.logger.warn({ msg: 'card message is gone; a new card will be published', lead_number: lead.id, error: description });
        return 'done';
      case 'follow_migration':
        await this.chats.migrated(lead.chat_id!, next.newChatId);
        return 'done';
      case 'retry':
        return this.failed(repeatId, lead.id, description, next);
    }
    const text = this.t.group.repeatPing(lead.id);
    // A reply to the card, in the card's topic.
    let ping = await this.telegram.send({
      chatId: lead.chat_id!,
      threadId: lead.card_thread_id,
      text,
      html: false,
      replyTo: lead.message_id!,
    });
    let topic = '';
    if (!ping.ok) {
      const step = nextStep({ action: 'ping', form: 'reply' }, ping, attempts);
      if (step.step !== 'general_topic') return this.pingFailed(repeatId, lead.id, ping.description, step);
      // The card's topic is closed: the ping goes into the chat's General topic, on its own (a reply would follow the
      // card into its topic), and ops hear of it once.
      this.chats.topicGone(lead.chat_id!, lead.card_thread_id, ping.description, this.t.alerts.topicRepeat(lead.id));
      topic = ` in the chat's General topic (the card's topic refused it: ${ping.description})`;
      ping = await this.telegram.send({ chatId: lead.chat_id!, text, html: false });
      if (!ping.ok) {
        const again = nextStep({ action: 'ping', form: 'reply', inGeneral: true }, ping, attempts);
        return this.pingFailed(repeatId, lead.id, ping.description, again);
      }
    }
    const detail = `card edited${minimal ? ` (minimal card: ${minimal})` : ''}, ping message ${ping.value.message_id}${topic}`;
    const entry: UnrecordedPing = { repeatId, leadId: lead.id, requestId: lead.request_id, messageId: ping.value.message_id, detail };
    this.unrecorded.set(repeatId, entry);
    await this.record(entry);
    return 'done';
  }

  private async record(ping: UnrecordedPing): Promise<void> {
    await this.repo.markRepeatHandled(ping.repeatId, 'pinged', this.clock.now());
    this.unrecorded.delete(ping.repeatId);
    this.logger.log({ msg: 'repeat notified', lead_number: ping.leadId, request_id: ping.requestId });
    await this.events.record(ping.leadId, 'repeat_notified', this.clock.now(), ping.detail, ping.repeatId);
  }

  private pingFailed(repeatId: number, leadId: number, error: string, step: FloodPause | Retry): Promise<Step> {
    if (step.step === 'flood_pause') return this.gate.flood(step.pauseMs, error);
    return this.failed(repeatId, leadId, error, step);
  }

  /** §4.2: the repeat's schedule; after its 5th failure the notification is given up, and the trace says so. */
  private async failed(repeatId: number, leadId: number, error: string, next: Retry): Promise<Step> {
    const { failures } = next;
    if (next.giveUp) {
      await this.repo.markRepeatHandled(repeatId, 'gave_up', this.clock.now(), error);
      await this.events.record(leadId, 'repeat_gave_up', this.clock.now(), `after ${failures} failures: ${error}`, repeatId);
      this.logger.warn({ msg: 'repeat notification given up', lead_number: leadId, failures, error });
      return 'done';
    }
    await this.repo.markRepeatFailed(repeatId, failures, this.clock.now() + next.delayMs, error);
    await this.events.record(leadId, 'repeat_notify_failed', this.clock.now(), `attempt ${failures}: ${error}`, repeatId);
    this.logger.warn({ msg: 'repeat notification attempt failed', lead_number: leadId, attempt: failures, error });
    return 'done';
  }
}
