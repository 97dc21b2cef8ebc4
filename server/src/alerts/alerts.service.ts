import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramResult } from '../telegram/telegram-result';
import { Metrics } from '../observability/metrics';
import { ChatMigrationsRepository } from '../repositories/chat-migrations.repository';
import { SettingsRepository } from '../repositories/settings.repository';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

export type AlertResult = 'sent' | 'throttled' | 'no_target' | 'failed';

/** Messages for ops to the admin chat (ADMIN_CHAT_ID, its ADMIN_THREAD_ID topic when set), each kind throttled. */
@Injectable()
export class AlertsService {
  private readonly logger = new Logger('Alerts');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly telegram: TelegramGateway,
    private readonly throttles: SettingsRepository,
    private readonly migrations: ChatMigrationsRepository,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** Sends `text` unless alert `key` was sent less than `intervalMs` ago. Never throws: an alert must not break a request. */
  async sendThrottled(key: string, intervalMs: number, text: string): Promise<AlertResult> {
    try {
      const { claimed, previous } = await this.throttles.claimAlert(key, this.clock.now(), intervalMs);
      if (!claimed) return 'throttled';
      const chat = this.config.telegram.adminChatId;
      if (!this.telegram.available || !chat) {
        this.logger.warn({ msg: `alert ${key} not sent (no TELEGRAM_BOT_TOKEN or ADMIN_CHAT_ID)`, alert: key, text });
        return 'no_target';
      }
      const sent = await this.sendToAdmin(text);
      if (sent.ok) {
        this.metrics.inc('alerts_sent_total', { kind: key.split(':')[0] });
        this.logger.log({ msg: `alert ${key} sent`, alert: key });
        return 'sent';
      }
      // Give the throttle back so the next occurrence can try again.
      await this.throttles.releaseAlert(key, previous);
      this.logger.error({
        msg: `alert ${key} failed`,
        alert: key,
        error: sent.description,
        kind: sent.kind,
        ...(sent.kind === 'flood' ? { retry_after_sec: sent.retryAfterSec } : {}),
      });
      return 'failed';
    } catch (err) {
      this.logger.error({ msg: `alert ${key} failed`, alert: key, error: errorText(err) });
      return 'failed';
    }
  }

  /** ADMIN_CHAT_ID, or the supergroup it became (null: no admin chat). Never throws: unread, it is ADMIN_CHAT_ID this time. */
  async adminChatId(): Promise<string | null> {
    const configured = this.config.telegram.adminChatId;
    if (!configured) return null;
    return this.migrations.current('admin', configured, this.clock.now()).catch(() => configured);
  }

  /**
   * A message to the admin chat; a topic Telegram refuses sends it to the General topic at once, saying so. A group that
   * became a supergroup is followed, as the leads group is (§4.5): the message goes there, saying to update ADMIN_CHAT_ID.
   */
  async sendToAdmin(text: string, followed = false): Promise<TelegramResult<{ message_id: number }>> {
    const chatId = await this.adminChatId();
    if (!chatId) return { ok: false, kind: 'refused', description: 'ADMIN_CHAT_ID is not set' };
    const threadId = this.config.telegram.adminThreadId;
    const sent = await this.telegram.send({ chatId, threadId, text, html: false });
    if (!sent.ok && sent.kind === 'migrated' && !followed) {
      const note = this.t.alerts.adminChatMigrated(chatId, await this.migrated(chatId, sent.newChatId));
      return this.sendToAdmin(`${note}\n\n${text}`, true);
    }
    if (sent.ok || sent.kind !== 'thread_gone' || threadId === null) return sent;
    this.logger.warn({ msg: 'admin topic refused; sent to the admin chat without a topic', thread_id: threadId, error: sent.description });
    const note = this.t.alerts.adminTopicGone(threadId, sent.description);
    return this.telegram.send({ chatId, text: `${note}\n\n${text}`, html: false });
  }

  /** A picture to the admin chat (the digest's chart), in the ADMIN_THREAD_ID topic, or the General topic when that is gone. */
  async sendPhotoToAdmin(
    photo: { content: Buffer; filename: string; caption: string },
    followed = false,
  ): Promise<TelegramResult<{ message_id: number }>> {
    const chatId = await this.adminChatId();
    if (!chatId) return { ok: false, kind: 'refused', description: 'ADMIN_CHAT_ID is not set' };
    const threadId = this.config.telegram.adminThreadId;
    const sent = await this.telegram.sendFile('photo', { chatId, threadId, ...photo });
    if (!sent.ok && sent.kind === 'migrated' && !followed) {
      await this.migrated(chatId, sent.newChatId);
      return this.sendPhotoToAdmin(photo, true);
    }
    if (sent.ok || sent.kind !== 'thread_gone' || threadId === null) return sent;
    return this.telegram.sendFile('photo', { chatId, ...photo });
  }

  /** The admin chat's new id, kept from now on, restarts included; the one message that met the migration names it. */
  private async migrated(from: string, to: string): Promise<string> {
    this.logger.warn({ msg: 'admin chat migrated; alerts and the digest go there from now on', from_chat: from, to_chat: to });
    // Not kept (a database error): this process still follows it, and the next start learns it again from Telegram.
    await this.migrations
      .remember('admin', this.config.telegram.adminChatId!, to, this.clock.now())
      .catch((err: unknown) => this.logger.warn({ msg: 'admin chat migration not stored', error: errorText(err) }));
    return to;
  }
}
