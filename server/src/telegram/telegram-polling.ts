import { Injectable, Logger, Optional } from '@nestjs/common';
import { InjectBot } from 'nestjs-telegraf';
import type { Telegraf } from 'telegraf';
import { errorText } from '@stickers/shared';
import { BOT_UPDATES, TelegramGateway } from './telegram.gateway';
import { classifyTelegramError, noBot, type TelegramResult } from './telegram-result';

/** How often stop() is repeated while a launch() it cannot reach yet is still going on. */
const STOP_REPEAT_MS = 20;

/** One call of `poll`; `ending`: paused or stopped (an unlaunched run never launches); `over`: its last getUpdates ended. */
interface PollRun {
  ending: boolean;
  launched: Promise<void> | null;
  over: Promise<void>;
}

function isNotRunning(err: unknown): boolean {
  return err instanceof Error && err.message === 'Bot is not running!';
}

/** telegraf's launch(), ended by `pause` or `stop`; a run waits for the previous one's end (two getUpdates get a 409). */
@Injectable()
export class TelegramPolling {
  private readonly logger = new Logger('Telegram');
  /** telegraf's own stop(), which throws "Bot is not running!" when nothing polls. */
  private readonly stopBot: ((reason?: string) => void) | null = null;
  private current: PollRun | null = null;
  private stopRequested = false;

  constructor(
    private readonly gateway: TelegramGateway,
    @Optional() @InjectBot() private readonly bot?: Telegraf,
  ) {
    if (!bot) return;
    // nestjs-telegraf stops the bot at shutdown, and telegraf throws when it never polled: that must not fail the close.
    const stop = bot.stop.bind(bot);
    this.stopBot = stop;
    bot.stop = (reason?: string) => {
      this.stopRequested = true;
      try {
        stop(reason);
      } catch (err) {
        if (!isNotRunning(err)) throw err;
      }
    };
  }

  /** Resolves when polling ends: ok when paused or stopped, else why it failed; rejects while an unended run goes on. */
  async poll(onLaunched: (username: string) => void): Promise<TelegramResult<void>> {
    const bot = this.bot;
    if (!bot) return noBot();
    const previous = this.current;
    if (previous && !previous.ending) throw new Error('already polling');
    const run: PollRun = { ending: false, launched: null, over: Promise.resolve() };
    const result = this.launch(bot, run, previous, onLaunched);
    run.over = result.then(() => {
      if (this.current === run) this.current = null;
    });
    this.current = run;
    return result;
  }

  private async launch(
    bot: Telegraf,
    run: PollRun,
    previous: PollRun | null,
    onLaunched: (username: string) => void,
  ): Promise<TelegramResult<void>> {
    if (previous) await previous.over;
    const me = await this.gateway.identity();
    if (!me.ok) return me;
    const { username } = me.value;
    if (this.stopRequested || run.ending) return { ok: true, value: undefined };
    const launched = bot.launch({ allowedUpdates: [...BOT_UPDATES], dropPendingUpdates: false }, () => onLaunched(username));
    run.launched = launched;
    try {
      await launched;
      return { ok: true, value: undefined };
    } catch (err) {
      return classifyTelegramError(err);
    } finally {
      run.launched = null;
    }
  }

  /** For good: no run starts after it. Resolves when the run is over. */
  stop(): Promise<void> {
    this.stopRequested = true;
    return this.pause();
  }

  /** The current run only (another instance polls now); `poll()` may start again later. */
  pause(): Promise<void> {
    const run = this.current;
    if (!run) return Promise.resolve();
    run.ending = true;
    const stop = this.stopBot;
    // A run not launched yet sees `ending`; telegraf's stop() misses a launch() still in deleteWebhook, so it is repeated.
    const again = () => {
      if (!run.launched || !stop) return;
      try {
        stop('shutdown');
      } catch (err) {
        if (!isNotRunning(err)) this.logger.error(`stopping the bot failed: ${errorText(err)}`);
      }
      setTimeout(again, STOP_REPEAT_MS).unref();
    };
    again();
    return run.over;
  }
}
