import { createInterface, type Interface } from 'node:readline';
import { Clock } from '../clock/clock';
import { botTokenProblem } from '../config/telegram-settings';
import type { SetupIo } from '../setup/setup-session';
import { SetupService } from '../setup/setup.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

export interface SetupCommandOptions {
  timeoutSec: number;
  admin: boolean;
  deleteWebhook: boolean;
  dropPending: boolean;
  /** --chat: the leads group's chat id; only that group is taken. */
  chat: string | null;
  /** --from: the operator's Telegram user id; only a group they add the bot to (or write in) is taken. */
  from: number | null;
}

/** Setup's conversation: lines to `out`; at a terminal, answers and Enter read from stdin. */
class TerminalIo implements SetupIo {
  readonly interactive: boolean;
  private readonly rl: Interface | null;

  constructor(
    private readonly io: CliIo,
    onInterrupt: () => void,
  ) {
    this.interactive = io.stdin?.isTTY === true;
    this.rl = this.interactive ? createInterface({ input: io.stdin!, terminal: false }) : null;
    // At a terminal readline takes Ctrl-C itself: pass it on as the stop it means.
    this.rl?.on('SIGINT', onInterrupt);
  }

  say(line: string): void {
    this.io.out(line);
  }

  async ask(question: string): Promise<string | null> {
    if (!this.rl) return null;
    this.io.out(question);
    return this.line(new AbortController().signal);
  }

  async enter(signal: AbortSignal): Promise<void> {
    if (this.rl) await this.line(signal);
    else await new Promise<never>(() => undefined);
  }

  /** The next line typed; never, once `signal` aborts. */
  private line(signal: AbortSignal): Promise<string> {
    return new Promise((resolve) => {
      const onLine = (text: string) => {
        signal.removeEventListener('abort', stop);
        resolve(text);
      };
      const stop = () => this.rl?.off('line', onLine);
      this.rl!.once('line', onLine);
      signal.addEventListener('abort', stop, { once: true });
    });
  }

  close(): void {
    this.rl?.close();
  }
}

function timeoutMs(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === '') return 10_000;
  return /^\d+$/.test(raw.trim()) && Number(raw) >= 100 && Number(raw) <= 120_000 ? Number(raw) : null;
}

/**
 * `npm run leads -- setup` (docs/requirements.md §16.1): needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_ROOT for the
 * sandbox), nothing else: no other variable, no running server.
 */
export async function runSetup(io: CliIo, options: SetupCommandOptions): Promise<number> {
  const token = io.env.TELEGRAM_BOT_TOKEN?.trim();
  if (!token) {
    io.err(
      'TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather (/newbot), then run TELEGRAM_BOT_TOKEN=<its token> npm run leads -- setup',
    );
    return 1;
  }
  const tokenProblem = botTokenProblem(token);
  if (tokenProblem) {
    io.err(`${tokenProblem}: copy it again from @BotFather (/mybots → the bot → API Token)`);
    return 1;
  }
  const apiRoot = io.env.TELEGRAM_API_ROOT?.trim() || 'https://api.telegram.org';
  if (!URL.canParse(apiRoot) || !['http:', 'https:'].includes(new URL(apiRoot).protocol)) {
    io.err(`TELEGRAM_API_ROOT must be an http(s) URL (got "${apiRoot}")`);
    return 1;
  }
  const timeout = timeoutMs(io.env.TELEGRAM_TIMEOUT_MS);
  if (timeout === null) {
    io.err(`TELEGRAM_TIMEOUT_MS must be a whole number from 100 to 120000 (got "${io.env.TELEGRAM_TIMEOUT_MS}")`);
    return 1;
  }
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const terminal = new TerminalIo(io, () => stop.abort());
  try {
    const setup = new SetupService(TelegramGateway.forToken(token, apiRoot, timeout), terminal, new Clock(), {
      ...options,
      signal: stop.signal,
    });
    return await setup.run();
  } finally {
    terminal.close();
  }
}
