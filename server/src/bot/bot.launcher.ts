import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TelegramGateway, type UpdateKind } from '../telegram/telegram.gateway';
import { BOT_COMMANDS } from './bot-commands.service';

/** False where updates are fed by hand (or no bot should poll); long polling otherwise. */
export const BOT_POLLING = Symbol('BotPolling');
/** How long after a failed start (or an end of polling) the next try comes; tests shorten it. */
export const BOT_RETRY_MS = Symbol('BotRetryMs');
export const BOT_RETRY_DEFAULT_MS = 5000;
/**
 * telegraf reports a launch before its first getUpdates; a conflict (409) or a revoked token (401) ends the launch at
 * once. A launch that still polls this long after is counted as polling, so a lasting fault logs nothing per try.
 */
const POLLING_CONFIRM_MS = 1000;
const UPDATES: readonly UpdateKind[] = ['message', 'callback_query'];

/**
 * Starts long polling (nestjs-telegraf's own launch is neither awaited nor caught, so a Telegram that is down at start
 * would crash the process). A failed start, or polling that fails later, is tried again every BOT_RETRY_MS while the
 * leads API keeps storing leads. Logged once per change between polling and failing, not per try.
 */
@Injectable()
export class BotLauncher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Bot');
  private stopping = false;
  private retry: NodeJS.Timeout | null = null;
  private state: 'starting' | 'polling' | 'failing' = 'starting';
  private failedTries = 0;
  private commandsRegistered = false;

  constructor(
    private readonly telegram: TelegramGateway,
    @Inject(BOT_POLLING) private readonly polling: boolean,
    @Inject(BOT_RETRY_MS) private readonly retryMs: number,
  ) {
    telegram.onUpdateError((err) => this.logger.error(`update failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  onApplicationBootstrap(): void {
    if (this.polling) this.launch();
  }

  private launch(): void {
    this.retry = null;
    let confirm: NodeJS.Timeout | null = null;
    const run = this.telegram.poll(UPDATES, (username) => {
      this.registerCommands();
      confirm = setTimeout(() => this.polled(username), POLLING_CONFIRM_MS);
      confirm.unref();
    });
    void run.then((result) => {
      if (confirm) clearTimeout(confirm);
      // ok: polling was stopped, by this shutdown or by nestjs-telegraf's.
      if (this.stopping || result.ok) return;
      this.failed(result.description);
    });
  }

  private polled(username: string): void {
    if (this.state === 'polling') return;
    const after = this.state === 'failing' ? ` after ${this.failedTries} failed ${this.failedTries === 1 ? 'try' : 'tries'}` : '';
    this.state = 'polling';
    this.failedTries = 0;
    this.logger.log(`polling for updates as @${username}${after}`);
  }

  private failed(error: string): void {
    this.failedTries += 1;
    if (this.state !== 'failing') {
      this.state = 'failing';
      this.logger.warn(`bot polling failed: ${error}; trying again every ${this.retryMs / 1000} s`);
    } else {
      this.logger.debug(`bot polling failed again: ${error}`);
    }
    this.retry = setTimeout(() => this.launch(), this.retryMs);
    this.retry.unref();
  }

  /** At the first launch, and at the next one while it fails; a failure is only logged (commands work without the menu). */
  private registerCommands(): void {
    if (this.commandsRegistered) return;
    this.commandsRegistered = true;
    void this.telegram.setMyCommands(BOT_COMMANDS).then((result) => {
      if (!result.ok) {
        this.commandsRegistered = false;
        this.logger.warn(`setMyCommands failed: ${result.description}`);
      }
    });
  }

  onApplicationShutdown(): void {
    this.stopping = true;
    if (this.retry) clearTimeout(this.retry);
    this.telegram.stopPolling();
  }
}
