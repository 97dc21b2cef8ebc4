import { Injectable } from '@nestjs/common';
import { hasCard, type Outcome, type PublishedLead } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { type FloodPause, nextStep, type Retry } from './telegram-answer.policy';
import { type LogLine, TelegramHandler, type TraceLine } from './telegram-handler';

/** `repeat_ping` rows (docs/requirements.md §4.6): the card shows the repeat, then a reply without personal data. */
@Injectable()
export class RepeatNotifier extends TelegramHandler {
  async handle(row: OutboxRow): Promise<Outcome> {
    const repeat = await this.repo.findRepeat(row.repeat_id!);
    // In the card already (it came before the card went out), or erased with its lead.
    if (!repeat || repeat.notified_at !== null) return { done: repeat?.notify_outcome ?? 'handled' };
    const lead = await this.repo.findLead(repeat.lead_id);
    if (!lead) return { done: 'no lead' };
    if (lead.status === 'spam' || lead.anonymised_at !== null) {
      // "A repeat of a lead that is spam or anonymised is only marked as handled."
      const why = lead.status === 'spam' ? 'lead is spam' : 'lead is anonymised';
      const skipped = () => this.repo.markRepeatHandled(repeat.id, 'skipped', this.clock.now());
      return { done: 'skipped', record: this.recorded(skipped, [repeat.lead_id, 'repeat_skipped', why, repeat.id]) };
    }
    // No card in the group now (gone, published anew): the new card shows every repeat, with no ping.
    if (!hasCard(lead)) return { done: 'in the next card' };
    return this.notify(repeat.id, row.attempts, lead);
  }

  private async notify(repeatId: number, attempts: number, lead: PublishedLead): Promise<Outcome> {
    const edit = await this.editCard('ping', lead, attempts);
    if (!('next' in edit)) return edit;
    const { next, description, minimal } = edit;
    switch (next.step) {
      case 'success': // "message is not modified" too: the card already shows this repeat
        break;
      case 'republish':
        return this.cardGone(lead.id, description);
      case 'retry':
        return this.failed(repeatId, lead.id, description, next);
    }
    const text = this.t.group.repeatPing(lead.id);
    const general = { chatId: lead.chat_id, text, html: false };
    let ping = await this.telegram.send({ ...general, threadId: lead.card_thread_id, replyTo: lead.message_id });
    let topic = '';
    if (!ping.ok) {
      const step = nextStep({ action: 'ping', form: 'reply' }, ping, attempts);
      if (step.step !== 'general_topic') return this.failed(repeatId, lead.id, ping.description, step);
      // The card's topic is closed: into the chat's General topic, on its own (a reply would follow the card).
      this.chats.topicGone(lead.chat_id, lead.card_thread_id, ping.description, this.t.alerts.topicRepeat(lead.id));
      topic = ` in the chat's General topic (the card's topic refused it: ${ping.description})`;
      ping = await this.telegram.send(general);
      if (!ping.ok) {
        const again = nextStep({ action: 'ping', form: 'reply', inGeneral: true }, ping, attempts);
        return this.failed(repeatId, lead.id, ping.description, again);
      }
    }
    const detail = `card edited${minimal ? ` (minimal card: ${minimal})` : ''}, ping message ${ping.value.message_id}${topic}`;
    const chatId = lead.chat_id;
    const messageId = ping.value.message_id;
    const pinged = async () => {
      await this.repo.markRepeatHandled(repeatId, 'pinged', this.clock.now());
      await this.repo.noticeSent(lead.id, chatId, messageId);
    };
    const log: LogLine = ['log', 'repeat notified', { request_id: lead.request_id }];
    return { done: 'sent', record: this.recorded(pinged, [lead.id, 'repeat_notified', detail, repeatId], log) };
  }

  private failed(repeatId: number, leadId: number, error: string, next: FloodPause | Retry): Promise<Outcome> | Outcome {
    if (next.step === 'flood_pause') return this.gate.pause(next.pauseMs, error);
    const { failures } = next;
    if (next.giveUp) {
      const gaveUp = () => this.repo.markRepeatHandled(repeatId, 'gave_up', this.clock.now(), error);
      const trace: TraceLine = [leadId, 'repeat_gave_up', `after ${failures} failures: ${error}`, repeatId];
      const log: LogLine = ['warn', 'repeat notification given up', { failures, error }];
      return { done: 'gave_up', attempts: failures, record: this.recorded(gaveUp, trace, log) };
    }
    return this.retryLater(next, error, { leadId, kind: 'repeat_notify_failed', msg: 'repeat notification attempt failed', repeatId });
  }
}
