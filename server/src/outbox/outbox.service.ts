import { Inject, Injectable, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { CardService } from '../cards/card.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { Lead } from '../database/schema';
import { SettingsRepository } from '../settings/settings.repository';
import { Metrics } from '../observability/metrics';
import { TelegramGateway, type TelegramFailure } from '../telegram/telegram.gateway';
import { LeadEventsRepository } from '../trace/lead-events.repository';
import { OutboxRepository } from './outbox.repository';
import {
  ALERT_AFTER_FAILURES,
  BATCH_SIZE,
  PUBLISH_ALERT_INTERVAL_MS,
  REPEAT_MAX_FAILURES,
  retryDelayMs,
} from './retry-schedule';

export const LEADS_CHAT_SETTING = 'leads_chat_id';
type Step = 'done' | 'flood' | 'stop';

/**
 * The outbox (seed: `publish_due`): publishes cards of stored leads and notifies repeats, with the seed's retry
 * schedule, Telegram flood control, group migration and a plain-text fallback. Ticks never overlap.
 */
@Injectable()
export class OutboxService {
  private readonly logger = new Logger('Outbox');
  private running: Promise<void> | null = null;
  private rerun = false;
  /** Flood control: no Bot API call before this time (Telegram's retry_after, obeyed exactly). */
  private pausedUntil = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  private pausedLogged = false;
  /** The chat id learnt from a migration (settings), read once; undefined until then. */
  private migratedChatId: string | null | undefined;
  private stopped = false;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly repo: OutboxRepository,
    private readonly cards: CardService,
    private readonly telegram: TelegramGateway,
    private readonly settings: SettingsRepository,
    private readonly alerts: AlertsService,
    private readonly events: LeadEventsRepository,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {}

  /** One pass: due leads, then due repeats. A call while a pass runs returns that pass (no overlap). */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** After a commit: publish now rather than at the next interval; if a pass is running, one more follows it. */
  publishSoon(): void {
    if (this.stopped) return;
    if (this.running) this.rerun = true;
    else void this.tick();
  }

  /** Resolves when no pass is running (graceful shutdown, tests). */
  async whenIdle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }

  private async loop(): Promise<void> {
    do {
      this.rerun = false;
      try {
        if (await this.publishDue()) {
          await this.refreshDirtyCards();
          await this.notifyRepeats();
        }
      } catch (err) {
        // A bug or a database error: logged, and the next tick tries again. Nothing is marked done.
        this.logger.error({ msg: 'outbox pass failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    } while (this.rerun && !this.stopped);
  }

  /** The leads group: the id learnt from a migration, else LEADS_CHAT_ID. */
  async leadsChatId(): Promise<string | null> {
    if (this.migratedChatId === undefined) this.migratedChatId = await this.settings.get(LEADS_CHAT_SETTING);
    return this.migratedChatId ?? this.config.telegram.leadsChatId;
  }

  private ready(): boolean {
    if (!this.telegram.available) {
      if (!this.pausedLogged) this.logger.warn({ msg: 'publishing paused: TELEGRAM_BOT_TOKEN is not set (leads are stored)' });
      this.pausedLogged = true;
      return false;
    }
    return this.clock.now() >= this.pausedUntil;
  }

  /** Returns false when the pass must stop (flood control, no bot). */
  private async publishDue(): Promise<boolean> {
    if (!this.ready()) return false;
    const chatId = await this.leadsChatId();
    if (!chatId) {
      if (!this.pausedLogged) this.logger.warn({ msg: 'publishing paused: LEADS_CHAT_ID is not set (leads are stored)' });
      this.pausedLogged = true;
      return false;
    }
    const due = await this.repo.dueLeads(this.clock.now(), BATCH_SIZE);
    for (const lead of due) {
      if (this.stopped) return false;
      const step = await this.publishLead(lead, (await this.leadsChatId()) ?? chatId, 0);
      if (step !== 'done') return false; // flood control: the rest of the batch waits too
    }
    return true;
  }

  private async publishLead(lead: Lead, chatId: string, depth: number): Promise<Step> {
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = this.cards.cardFor(lead, repeats);
    this.metrics.inc('outbox_publish_attempts_total');
    const sent = await this.telegram.send({ chatId, text: card.html, html: true, keyboard: card.keyboard });
    const repeatIds = repeats.map((r) => r.id);
    const dirtyAt = lead.card_dirty_at;
    if (sent.ok) {
      await this.repo.markPublished({ leadId: lead.id, chatId, messageId: sent.value.message_id, format: 'html', repeatIds, dirtyAt, now: this.clock.now() });
      await this.events.record(lead.id, 'published', this.clock.now(), `chat ${chatId}, message ${sent.value.message_id}`);
      this.metrics.inc('outbox_published_total');
      this.logger.log({ msg: 'card published', lead_number: lead.id, request_id: lead.request_id, message_id: sent.value.message_id });
      return 'done';
    }
    if (sent.kind === 'flood') {
      return this.flood(sent.retryAfterSec, sent.description, async () => {
        await this.repo.deferLead(lead.id, this.pausedUntil, sent.description);
        await this.events.record(lead.id, 'publish_deferred', this.clock.now(), `flood control: retry after ${sent.retryAfterSec} s`);
      });
    }
    if (sent.kind === 'migrated' && depth === 0) {
      await this.migrated(chatId, sent.newChatId);
      return this.publishLead(lead, sent.newChatId, depth + 1);
    }
    if (sent.kind === 'parse') {
      // Telegram refused the HTML: the lead must not wait forever, so the card goes out as plain text, and ops hear.
      const plain = await this.telegram.send({ chatId, text: card.plain, html: false, keyboard: card.keyboard });
      if (plain.ok) {
        await this.repo.markPublished({ leadId: lead.id, chatId, messageId: plain.value.message_id, format: 'plain', repeatIds, dirtyAt, now: this.clock.now() });
        await this.events.record(lead.id, 'published_plain', this.clock.now(), `HTML refused (${sent.description}); chat ${chatId}, message ${plain.value.message_id}`);
        this.metrics.inc('outbox_published_total');
        this.logger.warn({ msg: 'card published as plain text', lead_number: lead.id, request_id: lead.request_id, error: sent.description });
        void this.alerts.sendThrottled(
          `card_plain:${lead.id}`,
          PUBLISH_ALERT_INTERVAL_MS,
          `⚠️ Карточка заявки #${lead.id} отправлена простым текстом: Telegram не принял HTML (${sent.description}).`,
        );
        return 'done';
      }
      return this.publishFailed(lead, plain);
    }
    return this.publishFailed(lead, sent);
  }

  private async publishFailed(lead: Lead, failure: TelegramFailure): Promise<Step> {
    if (failure.kind === 'flood') return this.flood(failure.retryAfterSec, failure.description, () => this.repo.deferLead(lead.id, this.pausedUntil, failure.description));
    const attempts = lead.publish_attempts + 1;
    const next = this.clock.now() + retryDelayMs(attempts);
    await this.repo.markPublishFailed(lead.id, attempts, next, failure.description);
    await this.events.record(lead.id, 'publish_failed', this.clock.now(), `attempt ${attempts}: ${failure.description}; next attempt at ${new Date(next).toISOString()}`);
    this.metrics.inc('outbox_publish_failures_total');
    this.logger.warn({ msg: 'publish attempt failed', lead_number: lead.id, request_id: lead.request_id, attempt: attempts, error: failure.description });
    if (attempts >= ALERT_AFTER_FAILURES) {
      void this.alerts.sendThrottled(
        'publish_failing',
        PUBLISH_ALERT_INTERVAL_MS,
        `🚨 Карточки не публикуются: заявка #${lead.id}, попыток: ${attempts}, последняя ошибка: ${failure.description}. Список: /stickers_new`,
      );
    }
    return 'done';
  }

  /** Seed: on flood control wait exactly the time Telegram asks for; the rest of the batch waits too. */
  private async flood(retryAfterSec: number, description: string, defer: () => Promise<void>): Promise<Step> {
    this.pausedUntil = this.clock.now() + retryAfterSec * 1000;
    this.metrics.inc('telegram_flood_total');
    await defer();
    this.logger.warn({ msg: 'flood control', retry_after_sec: retryAfterSec, error: description });
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => this.publishSoon(), retryAfterSec * 1000);
    this.wakeTimer.unref();
    return 'flood';
  }

  private async migrated(from: string, to: string): Promise<void> {
    await this.settings.set(LEADS_CHAT_SETTING, to, this.clock.now());
    this.migratedChatId = to;
    await this.repo.moveChat(from, to);
    this.logger.warn({ msg: 'leads group migrated; publishing there from now on', from_chat: from, to_chat: to });
    void this.alerts.sendThrottled(
      `chat_migrated:${to}`,
      0,
      `ℹ️ Группа заявок стала супергруппой: новый id ${to} (был ${from}). Карточки идут туда; обновите LEADS_CHAT_ID.`,
    );
  }

  private async refreshDirtyCards(): Promise<void> {
    for (const { id } of await this.repo.dirtyCards(this.clock.now(), BATCH_SIZE)) {
      if (this.stopped || !this.ready()) return;
      if ((await this.refreshCard(id)) === 'flood') return;
    }
  }

  /**
   * Rewrites a published card to show its lead as it is now (status line, buttons, anonymisation). A failure
   * leaves the card marked, and the outbox tries again on the retry schedule.
   */
  async refreshCard(leadId: number): Promise<Step> {
    const lead = await this.repo.findLead(leadId);
    if (!lead || lead.card_dirty_at === null || lead.chat_id === null || lead.message_id === null) return 'done';
    if (!this.ready()) return 'flood';
    const card = this.cards.cardFor(lead, await this.repo.repeatsOf(lead.id));
    const html = lead.card_format !== 'plain';
    const edited = await this.telegram.edit(lead.chat_id, lead.message_id, html ? card.html : card.plain, html, card.keyboard);
    if (edited.ok || edited.kind === 'not_modified') {
      await this.repo.markCardRefreshed(lead.id, lead.card_dirty_at);
      await this.events.record(lead.id, 'card_rewritten', this.clock.now(), `status ${lead.status}${lead.anonymised_at !== null ? ', anonymised' : ''}`);
      return 'done';
    }
    if (edited.kind === 'flood') return this.flood(edited.retryAfterSec, edited.description, async () => undefined);
    if (edited.kind === 'gone') {
      await this.repo.republish(lead.id, this.clock.now(), edited.description);
      return 'done';
    }
    if (edited.kind === 'migrated') {
      await this.migrated(lead.chat_id, edited.newChatId);
      return 'done';
    }
    const attempts = lead.card_refresh_attempts + 1;
    await this.repo.markCardRefreshFailed(lead.id, attempts, this.clock.now() + retryDelayMs(attempts), edited.description);
    await this.events.record(lead.id, 'card_rewrite_failed', this.clock.now(), `attempt ${attempts}: ${edited.description}`);
    this.logger.warn({ msg: 'card rewrite attempt failed', lead_number: lead.id, attempt: attempts, error: edited.description });
    return 'done';
  }

  /** Seed, Branch 3: edit the card to add the repeat block, then a short ping as a reply with no personal data. */
  private async notifyRepeats(): Promise<void> {
    const due = await this.repo.dueRepeats(this.clock.now(), BATCH_SIZE);
    for (const repeat of due) {
      if (this.stopped || !this.ready()) return;
      if (repeat.status === 'spam' || repeat.anonymised_at !== null) {
        // "A repeat for a lead that became spam or was anonymised is only marked as handled."
        await this.repo.markRepeatHandled(repeat.id, 'skipped', this.clock.now());
        await this.events.record(repeat.lead_id, 'repeat_skipped', this.clock.now(), repeat.status === 'spam' ? 'lead is spam' : 'lead is anonymised', repeat.id);
        continue;
      }
      const lead = await this.repo.findLead(repeat.lead_id);
      if (!lead || lead.chat_id === null || lead.message_id === null) continue;
      const step = await this.notifyRepeat(repeat.id, repeat.notify_attempts, lead);
      if (step === 'flood') return;
    }
  }

  private async notifyRepeat(repeatId: number, attempts: number, lead: Lead): Promise<Step> {
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = this.cards.cardFor(lead, repeats);
    const html = lead.card_format !== 'plain';
    const edited = await this.telegram.edit(lead.chat_id!, lead.message_id!, html ? card.html : card.plain, html, card.keyboard);
    // "message is not modified" means the card already shows this repeat: success.
    if (!edited.ok && edited.kind !== 'not_modified') {
      if (edited.kind === 'gone') {
        await this.repo.republish(lead.id, this.clock.now(), edited.description);
        await this.events.record(lead.id, 'card_gone', this.clock.now(), `${edited.description}; a new card will be published`);
        this.logger.warn({ msg: 'card message is gone; a new card will be published', lead_number: lead.id, error: edited.description });
        return 'done';
      }
      if (edited.kind === 'migrated') {
        await this.migrated(lead.chat_id!, edited.newChatId);
        return 'done';
      }
      return this.repeatFailed(repeatId, attempts, lead.id, edited);
    }
    const ping = await this.telegram.send({
      chatId: lead.chat_id!,
      text: `🔁 Повторное обращение по заявке #${lead.id}`,
      html: false,
      replyTo: lead.message_id!,
    });
    if (!ping.ok) return this.repeatFailed(repeatId, attempts, lead.id, ping);
    await this.repo.markRepeatHandled(repeatId, 'pinged', this.clock.now());
    await this.events.record(lead.id, 'repeat_notified', this.clock.now(), `card edited, ping message ${ping.value.message_id}`, repeatId);
    this.logger.log({ msg: 'repeat notified', lead_number: lead.id, request_id: lead.request_id });
    return 'done';
  }

  private async repeatFailed(repeatId: number, attempts: number, leadId: number, failure: TelegramFailure): Promise<Step> {
    if (failure.kind === 'flood') return this.flood(failure.retryAfterSec, failure.description, async () => undefined);
    const failures = attempts + 1;
    if (failures >= REPEAT_MAX_FAILURES) {
      await this.repo.markRepeatHandled(repeatId, 'gave_up', this.clock.now(), failure.description);
      await this.events.record(leadId, 'repeat_gave_up', this.clock.now(), `after ${failures} failures: ${failure.description}`, repeatId);
      this.logger.warn({ msg: 'repeat notification given up', lead_number: leadId, failures, error: failure.description });
      return 'done';
    }
    await this.repo.markRepeatFailed(repeatId, failures, this.clock.now() + retryDelayMs(failures), failure.description);
    await this.events.record(leadId, 'repeat_notify_failed', this.clock.now(), `attempt ${failures}: ${failure.description}`, repeatId);
    this.logger.warn({ msg: 'repeat notification attempt failed', lead_number: leadId, attempt: failures, error: failure.description });
    return 'done';
  }
}
