import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectBot } from 'nestjs-telegraf';
import type { Telegraf } from 'telegraf';
import { BOT_COMMANDS } from './bot-commands.service';

/** False where updates are fed by hand (or no bot should poll); long polling otherwise. */
export const BOT_POLLING = Symbol('BotPolling');
const RELAUNCH_MS = 5000;

/**
 * Starts long polling ourselves instead of letting nestjs-telegraf do it: its launch is neither awaited nor caught,
 * so a Telegram that is down at start would crash the process. Here a failed launch is logged and retried, and
 * the leads API keeps storing leads meanwhile.
 */
@Injectable()
export class BotLauncher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Bot');
  private stopping = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    @InjectBot() private readonly bot: Telegraf,
    @Inject(BOT_POLLING) private readonly polling: boolean,
  ) {
    // nestjs-telegraf stops the bot at shutdown; telegraf throws "Bot is not running!" if it never started.
    // (Telegraf keeps the polling loop in a private field; it is set once polling has started.)
    const stop = bot.stop.bind(bot);
    bot.stop = (reason?: string) => {
      if ((bot as unknown as { polling?: unknown }).polling !== undefined) stop(reason);
    };
    bot.catch((err) => this.logger.error(`update failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  onApplicationBootstrap(): void {
    if (this.polling) this.launch();
  }

  /**
   * telegraf's own launch() does getMe, deleteWebhook, then starts polling; a shutdown between those steps would
   * leave a bot polling after the app closed. The same steps here, with a check for shutdown before polling starts.
   */
  private launch(): void {
    const run = async () => {
      this.bot.botInfo ??= await this.bot.telegram.getMe();
      await this.bot.telegram.deleteWebhook({ drop_pending_updates: false });
      if (this.stopping) return;
      this.logger.log(`polling for updates as @${this.bot.botInfo.username}`);
      this.bot.telegram.setMyCommands([...BOT_COMMANDS]).catch((err: unknown) => this.logger.warn(`setMyCommands failed: ${String(err)}`));
      const polling = this.bot as unknown as { startPolling(allowed: string[]): Promise<void> };
      await polling.startPolling(['message', 'callback_query']);
    };
    run().catch((err: unknown) => {
      if (this.stopping) return;
      this.logger.warn(`bot polling stopped: ${err instanceof Error ? err.message : String(err)}; retrying in ${RELAUNCH_MS / 1000} s`);
      this.retry = setTimeout(() => this.launch(), RELAUNCH_MS);
      this.retry.unref();
    });
  }

  onApplicationShutdown(): void {
    this.stopping = true;
    if (this.retry) clearTimeout(this.retry);
    this.bot.stop('shutdown');
  }
}
