import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { LeaseService } from '../cluster/lease.service';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { BOT_UPDATES, TelegramGateway } from '../telegram/telegram.gateway';
import { TelegramPolling } from '../telegram/telegram-polling';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { botCommands, inboxMenuButton } from './bot-commands.service';

/** False where updates are fed by hand (no polling, no webhook set); true in production. */
export const BOT_POLLING = Symbol('BotPolling');
/** How long after a failed start (or an end of polling) the next try comes; tests shorten it. */
export const BOT_RETRY_MS = Symbol('BotRetryMs');
export const BOT_RETRY_DEFAULT_MS = 5000;
/** A launch still polling this long after telegraf reported it counts as polling (a 409 or a 401 ends it at once). */
const POLLING_CONFIRM_MS = 1000;

/** The webhook set at start (TELEGRAM_WEBHOOK_URL), else long polling by the `telegram-polling` lease's holder only (two would get a 409). */
@Injectable()
export class BotLauncher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Bot');
  private stopping = false;
  private retry: NodeJS.Timeout | null = null;
  private state: 'starting' | 'polling' | 'failing' = 'starting';
  private failedTries = 0;
  private commandsRegistered = false;
  /** This instance holds the polling lease and polls (or is starting to). */
  private leading = false;
  private leaseTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly telegram: TelegramGateway,
    private readonly poller: TelegramPolling,
    private readonly leases: LeaseService,
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(BOT_POLLING) private readonly polling: boolean,
    @Inject(BOT_RETRY_MS) private readonly retryMs: number,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {
    telegram.onUpdateError((err) => this.logger.error(`update failed: ${errorText(err)}`));
  }

  onApplicationBootstrap(): void {
    if (!this.polling) return;
    if (this.config.telegram.webhook) void this.setWebhook();
    else void this.contendForPolling();
  }

  private async setWebhook(): Promise<void> {
    this.retry = null;
    const { url, secret } = this.config.telegram.webhook!;
    // `secret` comes back in the X-Telegram-Bot-Api-Secret-Token header; waiting updates are kept (a restart loses no press).
    const result = await this.telegram.call('setWebhook', {
      url,
      secret_token: secret,
      allowed_updates: [...BOT_UPDATES],
      drop_pending_updates: false,
    });
    if (this.stopping) return;
    if (result.ok) {
      this.logger.log(`webhook set: Telegram posts updates to ${url}`);
      this.registerCommands();
      this.state = 'polling';
      return;
    }
    this.failed('setWebhook', result.description, () => void this.setWebhook());
  }

  /** Polls while this instance holds the lease; a database error keeps the current state until the lease runs out. */
  private async contendForPolling(): Promise<void> {
    this.leaseTimer = null;
    if (this.stopping) return;
    let held: boolean;
    let unread = false;
    try {
      held = await this.leases.take('telegram-polling');
    } catch (err) {
      held = this.leases.holds('telegram-polling');
      unread = true;
      this.logger.warn(`polling lease not renewed: ${errorText(err)}`);
    }
    if (this.stopping) return;
    if (held && !this.leading) {
      this.leading = true;
      this.logger.log(`this instance polls for updates (${this.leases.instanceId})`);
      this.launch();
    } else if (!held && this.leading) {
      this.leading = false;
      this.logger.log(
        unread
          ? 'polling lease lapsed while the database was unreachable: this one stops until it takes the lease again'
          : 'another instance polls for updates now: this one stops',
      );
      if (this.retry) clearTimeout(this.retry);
      this.retry = null;
      void this.poller.pause();
    }
    this.leaseTimer = setTimeout(() => void this.contendForPolling(), this.leases.timings.renewMs);
    this.leaseTimer.unref();
  }

  private launch(): void {
    this.retry = null;
    if (!this.leading || this.stopping) return;
    let confirm: NodeJS.Timeout | null = null;
    const run = this.poller.poll((username) => {
      this.registerCommands();
      confirm = setTimeout(() => this.polled(username), POLLING_CONFIRM_MS);
      confirm.unref();
    });
    void run.then((result) => {
      if (confirm) clearTimeout(confirm);
      // ok: polling was stopped, by this shutdown, by nestjs-telegraf's, or because another instance polls now.
      if (this.stopping || result.ok || !this.leading) return;
      this.failed('bot polling', result.description, () => this.launch());
    });
  }

  private polled(username: string): void {
    if (this.state === 'polling') return;
    const after = this.state === 'failing' ? ` after ${this.failedTries} failed ${this.failedTries === 1 ? 'try' : 'tries'}` : '';
    this.state = 'polling';
    this.failedTries = 0;
    this.logger.log(`polling for updates as @${username}${after}`);
  }

  /** Logged once when working turns into failing (then at debug level), tried again every BOT_RETRY_MS. */
  private failed(what: string, error: string, again: () => void): void {
    this.failedTries += 1;
    if (this.state !== 'failing') this.logger.warn(`${what} failed: ${error}; trying again every ${this.retryMs / 1000} s`);
    else this.logger.debug(`${what} failed again: ${error}`);
    this.state = 'failing';
    this.retry = setTimeout(again, this.retryMs);
    this.retry.unref();
  }

  /**
   * At each launch until it succeeds; the menu buttons go first (a test waits for the commands as a launch's sign).
   * Visitors write to the bot in their private chats, so what the menus offer there is Telegram's own: the default button
   * (each manager's chat gets the inbox's, and so does any chat that sends /stickers_inbox) and no commands; the team's
   * commands are listed in groups. Both undo what a launch of an older version set for every chat.
   */
  private registerCommands(): void {
    if (this.commandsRegistered) return;
    this.commandsRegistered = true;
    void (async () => {
      const reset = await this.telegram.call('setChatMenuButton', { menu_button: { type: 'default' } });
      if (!reset.ok) this.logger.warn(`setChatMenuButton failed: ${reset.description}`);
      const url = this.config.inbox.url;
      if (url) await this.managersInboxButtons(url);
      const cleared = await this.telegram.call('deleteMyCommands', {});
      if (!cleared.ok) this.logger.warn(`deleteMyCommands failed: ${cleared.description}`);
      const result = await this.telegram.call('setMyCommands', { commands: botCommands(this.t), scope: { type: 'all_group_chats' } });
      if (!result.ok) {
        this.commandsRegistered = false;
        this.logger.warn(`setMyCommands failed: ${result.description}`);
      }
    })();
  }

  /** LEADS_MANAGER_IDS' private chats get the inbox's menu button. */
  private async managersInboxButtons(url: string): Promise<void> {
    for (const id of this.config.telegram.managerIds ?? []) {
      const set = await this.telegram.call('setChatMenuButton', { chat_id: id, menu_button: inboxMenuButton(this.t, url) });
      // A manager who never opened the bot has no chat with it yet ("chat not found"): /stickers_inbox there sets it.
      if (!set.ok) this.logger.log(`the inbox's menu button for manager ${id} is not set: ${set.description}`);
    }
  }

  /** Before the database closes: hand the polling lease over at once rather than after it runs out. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.retry) clearTimeout(this.retry);
    void this.poller.stop();
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    if (this.leading) {
      this.leading = false;
      await this.leases.release('telegram-polling').catch(() => undefined);
    }
  }
}
