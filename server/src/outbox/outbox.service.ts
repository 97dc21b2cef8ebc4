import { Inject, Injectable, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import type { Card } from '../cards/card.renderer';
import { CardService } from '../cards/card.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { Lead, LeadEventKind } from '../database/schema';
import { isStorageError, WriteHealth } from '../database/write-health';
import { SettingsRepository } from '../settings/settings.repository';
import { Metrics } from '../observability/metrics';
import { TelegramGateway, type TelegramFailure, type TelegramResult } from '../telegram/telegram.gateway';
import { LeadEventsRepository } from '../trace/lead-events.repository';
import { OutboxRepository } from './outbox.repository';
import {
  ALERT_AFTER_FAILURES,
  BATCH_SIZE,
  MINIMAL_CARD_ALERT_INTERVAL_MS,
  PUBLISH_ALERT_INTERVAL_MS,
  REPEAT_MAX_FAILURES,
  passBackoffMs,
  retryDelayMs,
} from './retry-schedule';

export const LEADS_CHAT_SETTING = 'leads_chat_id';
type Step = 'done' | 'flood' | 'stop';
/**
 * What a card rewrite came to, for the caller: 'shown' when the card in Telegram now shows the lead as stored
 * (edited, already showing it, or nothing to rewrite); 'later' when the outbox will try again (flood pause,
 * failure, message gone, card not published yet).
 */
export type CardRefresh = 'shown' | 'later';

/** A card Telegram accepted whose publication is not in the database yet (the write after the send failed). */
interface UnrecordedCard {
  leadId: number;
  requestId: string;
  chatId: string;
  messageId: number;
  format: 'html' | 'plain';
  repeatIds: number[];
  dirtyAt: number | null;
  sentAt: number;
  kind: Extract<LeadEventKind, 'published' | 'published_plain' | 'published_minimal'>;
  detail: string;
  /** What Telegram refused before this fallback card went out. */
  refused?: string;
}

/** A repeat ping Telegram accepted whose "handled" mark is not in the database yet. */
interface UnrecordedPing {
  repeatId: number;
  leadId: number;
  requestId: string;
  messageId: number;
  detail: string;
}

/** Telegram's "text over 4096 characters": no other form of the same card fits, only a shorter one. */
function tooLong(failure: TelegramFailure): boolean {
  return failure.kind === 'too_long' || /message is too long|MESSAGE_TOO_LONG/i.test(failure.description);
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * The outbox (seed: `publish_due`): publishes cards of stored leads and notifies repeats, with the seed's retry
 * schedule, Telegram flood control, group migration, a plain-text and a minimal fallback. Ticks never overlap.
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
  /**
   * Sent but not recorded, by lead id and by repeat id. A pass records these before anything else and never sends
   * them again: a database that refuses the write after a successful send must not turn into a card per tick.
   */
  private readonly unrecordedCards = new Map<number, UnrecordedCard>();
  private readonly unrecordedPings = new Map<number, UnrecordedPing>();
  /** Failed passes in a row (a database error or a bug), and no pass before `backoffUntil`. */
  private failedPasses = 0;
  private backoffUntil = 0;
  /** When a card last went out (any form); undefined until read from the database. Readiness asks. */
  private lastCardAt: number | null | undefined;

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
    private readonly writeHealth: WriteHealth,
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

  /**
   * When the outbox last put a card in the group, full, plain or minimal (null: never). Readiness uses it to tell
   * an outbox that makes progress around one poison lead from one that is stuck.
   */
  async lastCardPublishedAt(): Promise<number | null> {
    if (this.lastCardAt === undefined) this.lastCardAt = await this.repo.lastPublishedAt();
    return this.lastCardAt;
  }

  /** Shutdown: one last try to record what was sent; what still cannot be recorded is logged for ops. */
  async recordSentBeforeShutdown(): Promise<void> {
    if (this.unrecordedCards.size === 0 && this.unrecordedPings.size === 0) return;
    try {
      await this.recordUnrecorded();
    } catch (err) {
      this.logger.error({
        msg: 'sent messages not recorded at shutdown: the next start publishes these cards again',
        cards: [...this.unrecordedCards.values()].map((c) => ({ lead_number: c.leadId, chat_id: c.chatId, message_id: c.messageId })),
        pings: [...this.unrecordedPings.values()].map((p) => ({ lead_number: p.leadId, repeat_id: p.repeatId, message_id: p.messageId })),
        error: errorText(err),
      });
    }
  }

  private async loop(): Promise<void> {
    do {
      this.rerun = false;
      // After a failed pass the outbox waits (the database is full, locked, gone) instead of hammering it each tick.
      if (this.clock.now() < this.backoffUntil) return;
      try {
        await this.recordUnrecorded();
        if (await this.publishDue()) {
          await this.refreshDirtyCards();
          await this.notifyRepeats();
        }
        this.passSucceeded();
      } catch (err) {
        this.passFailed(err);
      }
    } while (this.rerun && !this.stopped);
  }

  private passSucceeded(): void {
    if (this.failedPasses > 0) this.logger.log({ msg: 'outbox passes succeed again', failed_passes: this.failedPasses });
    this.failedPasses = 0;
    this.backoffUntil = 0;
    this.writeHealth.recordSuccess('outbox');
  }

  /** A database error or a bug: nothing is marked done, and the next pass waits 5 s, 15 s, then 60 s at most. */
  private passFailed(err: unknown): void {
    const now = this.clock.now();
    this.failedPasses += 1;
    const backoff = passBackoffMs(this.failedPasses);
    this.backoffUntil = now + backoff;
    if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, now);
    this.logger.error({
      msg: 'outbox pass failed',
      failed_passes: this.failedPasses,
      next_pass_in_sec: backoff / 1000,
      unrecorded_cards: this.unrecordedCards.size,
      unrecorded_pings: this.unrecordedPings.size,
      error: errorText(err),
    });
  }

  private async recordUnrecorded(): Promise<void> {
    for (const card of [...this.unrecordedCards.values()]) await this.recordCard(card);
    for (const ping of [...this.unrecordedPings.values()]) await this.recordPing(ping);
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
    const unrecorded = this.unrecordedCards.get(lead.id);
    if (unrecorded) {
      await this.recordCard(unrecorded);
      return 'done';
    }
    const repeats = await this.repo.repeatsOf(lead.id);
    const card = this.cards.cardFor(lead, repeats);
    const base = { leadId: lead.id, requestId: lead.request_id, chatId, repeatIds: repeats.map((r) => r.id), dirtyAt: lead.card_dirty_at };
    this.metrics.inc('outbox_publish_attempts_total');
    const sent = await this.telegram.send({ chatId, text: card.html, html: true, keyboard: card.keyboard });
    if (sent.ok) {
      const messageId = sent.value.message_id;
      return this.sent({ ...base, messageId, format: 'html', kind: 'published', detail: `chat ${chatId}, message ${messageId}` });
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
    // Telegram counts the text after parsing the markup: a card too long as HTML is as long as plain text.
    if (tooLong(sent)) return this.publishMinimal(lead, base, sent);
    if (sent.kind === 'parse') {
      // Telegram refused the HTML: the lead must not wait forever, so the card goes out as plain text, and ops hear.
      const plain = await this.telegram.send({ chatId, text: card.plain, html: false, keyboard: card.keyboard });
      if (plain.ok) {
        const messageId = plain.value.message_id;
        const detail = `HTML refused (${sent.description}); chat ${chatId}, message ${messageId}`;
        return this.sent({ ...base, messageId, format: 'plain', kind: 'published_plain', detail, refused: sent.description });
      }
      if (tooLong(plain)) return this.publishMinimal(lead, base, plain);
      return this.publishFailed(lead, plain);
    }
    return this.publishFailed(lead, sent);
  }

  /** A card Telegram refuses as too long goes out short (number, status, buttons) so the lead does not wait forever. */
  private async publishMinimal(
    lead: Lead,
    base: Pick<UnrecordedCard, 'leadId' | 'requestId' | 'chatId' | 'repeatIds' | 'dirtyAt'>,
    refusal: TelegramFailure,
  ): Promise<Step> {
    const minimal = this.cards.minimalCardFor(lead);
    const sent = await this.telegram.send({ chatId: base.chatId, text: minimal.html, html: true, keyboard: minimal.keyboard });
    if (!sent.ok) return this.publishFailed(lead, sent);
    const messageId = sent.value.message_id;
    const detail = `card refused (${refusal.description}); minimal card in chat ${base.chatId}, message ${messageId}`;
    return this.sent({ ...base, messageId, format: 'html', kind: 'published_minimal', detail, refused: refusal.description });
  }

  /** Telegram has the card: remember it first, so that a failing write cannot make the next pass send it again. */
  private async sent(card: Omit<UnrecordedCard, 'sentAt'>): Promise<Step> {
    const entry: UnrecordedCard = { ...card, sentAt: this.clock.now() };
    this.unrecordedCards.set(entry.leadId, entry);
    await this.recordCard(entry);
    return 'done';
  }

  private async recordCard(card: UnrecordedCard): Promise<void> {
    const { leadId, chatId, messageId, format, repeatIds, dirtyAt } = card;
    await this.repo.markPublished({ leadId, chatId, messageId, format, repeatIds, dirtyAt, now: card.sentAt });
    this.unrecordedCards.delete(leadId);
    this.lastCardAt = Math.max(this.lastCardAt ?? 0, card.sentAt);
    this.metrics.inc('outbox_published_total');
    const log = { lead_number: leadId, request_id: card.requestId, message_id: messageId };
    if (card.kind === 'published') this.logger.log({ msg: 'card published', ...log });
    if (card.kind === 'published_plain') {
      this.logger.warn({ msg: 'card published as plain text', ...log, error: card.refused });
      void this.alerts.sendThrottled(
        `card_plain:${leadId}`,
        PUBLISH_ALERT_INTERVAL_MS,
        `⚠️ Карточка заявки #${leadId} отправлена простым текстом: Telegram не принял HTML (${card.refused}).`,
      );
    }
    if (card.kind === 'published_minimal') {
      this.logger.warn({ msg: 'card published in minimal form: the full card is too long', ...log, error: card.refused });
      this.alertMinimal(leadId, card.refused ?? '');
    }
    await this.events.record(leadId, card.kind, this.clock.now(), card.detail);
  }

  /** One alert per lead, whether the minimal card replaced it at publication or at a later rewrite. */
  private alertMinimal(leadId: number, refused: string): void {
    void this.alerts.sendThrottled(
      `card_minimal:${leadId}`,
      MINIMAL_CARD_ALERT_INTERVAL_MS,
      `⚠️ Карточка заявки #${leadId} слишком длинная для Telegram (${refused}): в группе краткая карточка — номер, статус, кнопки. ` +
        `Данные заявки: trace #${leadId}.`,
    );
  }

  private async publishFailed(lead: Lead, failure: TelegramFailure): Promise<Step> {
    if (failure.kind === 'flood') {
      const defer = () => this.repo.deferLead(lead.id, this.pausedUntil, failure.description);
      return this.flood(failure.retryAfterSec, failure.description, defer);
    }
    const attempts = lead.publish_attempts + 1;
    const next = this.clock.now() + retryDelayMs(attempts);
    await this.repo.markPublishFailed(lead.id, attempts, next, failure.description);
    const detail = `attempt ${attempts}: ${failure.description}; next attempt at ${new Date(next).toISOString()}`;
    await this.events.record(lead.id, 'publish_failed', this.clock.now(), detail);
    this.metrics.inc('outbox_publish_failures_total');
    const log = { lead_number: lead.id, request_id: lead.request_id, attempt: attempts, error: failure.description };
    this.logger.warn({ msg: 'publish attempt failed', ...log });
    if (attempts >= ALERT_AFTER_FAILURES) {
      void this.alerts.sendThrottled(
        'publish_failing',
        PUBLISH_ALERT_INTERVAL_MS,
        `🚨 Карточки не публикуются: заявка #${lead.id}, попыток: ${attempts}, последняя ошибка: ${failure.description}. ` +
          'Список: /stickers_new',
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

  /**
   * Edits a published card to `card`. When Telegram refuses it as too long, the minimal card takes its place, so
   * the status buttons keep working; `minimal` then holds Telegram's refusal.
   */
  private async editCard(lead: Lead, card: Card): Promise<{ result: TelegramResult<unknown>; minimal: string | null }> {
    const html = lead.card_format !== 'plain';
    const edited = await this.telegram.edit(lead.chat_id!, lead.message_id!, html ? card.html : card.plain, html, card.keyboard);
    if (edited.ok || !tooLong(edited)) return { result: edited, minimal: null };
    const minimal = this.cards.minimalCardFor(lead);
    const result = await this.telegram.edit(lead.chat_id!, lead.message_id!, html ? minimal.html : minimal.plain, html, minimal.keyboard);
    if (result.ok || result.kind === 'not_modified') {
      const msg = 'card rewritten in minimal form: the full card is too long';
      this.logger.warn({ msg, lead_number: lead.id, error: edited.description });
      this.alertMinimal(lead.id, edited.description);
    }
    return { result, minimal: edited.description };
  }

  private async refreshDirtyCards(): Promise<void> {
    for (const { id } of await this.repo.dirtyCards(this.clock.now(), BATCH_SIZE)) {
      if (this.stopped || !this.ready()) return;
      if ((await this.rewrite(id)) === 'flood') return;
    }
  }

  /**
   * Rewrites a published card to show its lead as it is now (status line, buttons, anonymisation). A failure
   * leaves the card marked, and the outbox tries again on the retry schedule. Never throws: a database error here
   * is the outbox's (readiness hears of it) and the card is rewritten later.
   */
  async refreshCard(leadId: number): Promise<CardRefresh> {
    try {
      return (await this.rewrite(leadId)) === 'shown' ? 'shown' : 'later';
    } catch (err) {
      if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, this.clock.now());
      this.logger.error({ msg: 'card rewrite failed', lead_number: leadId, error: errorText(err) });
      return 'later';
    }
  }

  private async rewrite(leadId: number): Promise<CardRefresh | 'flood'> {
    const lead = await this.repo.findLead(leadId);
    if (!lead) return 'later';
    if (lead.card_dirty_at === null) return lead.published_at !== null ? 'shown' : 'later';
    if (lead.chat_id === null || lead.message_id === null) return 'later';
    if (!this.ready()) return 'flood';
    const { result: edited, minimal } = await this.editCard(lead, this.cards.cardFor(lead, await this.repo.repeatsOf(lead.id)));
    if (edited.ok || edited.kind === 'not_modified') {
      await this.repo.markCardRefreshed(lead.id, lead.card_dirty_at);
      const anonymised = lead.anonymised_at !== null ? ', anonymised' : '';
      const detail = `status ${lead.status}${anonymised}${minimal ? `; minimal card (${minimal})` : ''}`;
      await this.events.record(lead.id, 'card_rewritten', this.clock.now(), detail);
      return 'shown';
    }
    if (edited.kind === 'flood') {
      await this.flood(edited.retryAfterSec, edited.description, () => Promise.resolve());
      return 'flood';
    }
    if (edited.kind === 'gone') {
      await this.repo.republish(lead.id, this.clock.now(), edited.description);
      return 'later';
    }
    if (edited.kind === 'migrated') {
      await this.migrated(lead.chat_id, edited.newChatId);
      return 'later';
    }
    const attempts = lead.card_refresh_attempts + 1;
    await this.repo.markCardRefreshFailed(lead.id, attempts, this.clock.now() + retryDelayMs(attempts), edited.description);
    await this.events.record(lead.id, 'card_rewrite_failed', this.clock.now(), `attempt ${attempts}: ${edited.description}`);
    this.logger.warn({ msg: 'card rewrite attempt failed', lead_number: lead.id, attempt: attempts, error: edited.description });
    return 'later';
  }

  /** Seed, Branch 3: edit the card to add the repeat block, then a short ping as a reply with no personal data. */
  private async notifyRepeats(): Promise<void> {
    const due = await this.repo.dueRepeats(this.clock.now(), BATCH_SIZE);
    for (const repeat of due) {
      if (this.stopped || !this.ready()) return;
      if (repeat.status === 'spam' || repeat.anonymised_at !== null) {
        // "A repeat for a lead that became spam or was anonymised is only marked as handled."
        await this.repo.markRepeatHandled(repeat.id, 'skipped', this.clock.now());
        const why = repeat.status === 'spam' ? 'lead is spam' : 'lead is anonymised';
        await this.events.record(repeat.lead_id, 'repeat_skipped', this.clock.now(), why, repeat.id);
        continue;
      }
      const lead = await this.repo.findLead(repeat.lead_id);
      if (!lead || lead.chat_id === null || lead.message_id === null) continue;
      const step = await this.notifyRepeat(repeat.id, repeat.notify_attempts, lead);
      if (step === 'flood') return;
    }
  }

  private async notifyRepeat(repeatId: number, attempts: number, lead: Lead): Promise<Step> {
    const unrecorded = this.unrecordedPings.get(repeatId);
    if (unrecorded) {
      await this.recordPing(unrecorded);
      return 'done';
    }
    const repeats = await this.repo.repeatsOf(lead.id);
    const { result: edited, minimal } = await this.editCard(lead, this.cards.cardFor(lead, repeats));
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
    const detail = `card edited${minimal ? ` (minimal card: ${minimal})` : ''}, ping message ${ping.value.message_id}`;
    const entry: UnrecordedPing = { repeatId, leadId: lead.id, requestId: lead.request_id, messageId: ping.value.message_id, detail };
    this.unrecordedPings.set(repeatId, entry);
    await this.recordPing(entry);
    return 'done';
  }

  private async recordPing(ping: UnrecordedPing): Promise<void> {
    await this.repo.markRepeatHandled(ping.repeatId, 'pinged', this.clock.now());
    this.unrecordedPings.delete(ping.repeatId);
    this.logger.log({ msg: 'repeat notified', lead_number: ping.leadId, request_id: ping.requestId });
    await this.events.record(ping.leadId, 'repeat_notified', this.clock.now(), ping.detail, ping.repeatId);
  }

  private async repeatFailed(repeatId: number, attempts: number, leadId: number, failure: TelegramFailure): Promise<Step> {
    if (failure.kind === 'flood') return this.flood(failure.retryAfterSec, failure.description, () => Promise.resolve());
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
