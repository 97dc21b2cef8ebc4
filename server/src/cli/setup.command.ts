import { createInterface, type Interface } from 'node:readline';
import { Clock } from '../clock/clock';
import { EnvReader } from '../config/env-reader';
import { botTokenProblem, readApiRoot } from '../config/telegram-settings';
import type { SetupIo, SetupOptions } from '../setup/setup-session';
import { SetupService } from '../setup/setup.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

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

/**
 * `npm run leads -- setup` (docs/requirements.md §16.1): needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_ROOT for the
 * sandbox), nothing else: no other variable, no running server.
 */
export async function runSetup(io: CliIo, options: SetupOptions): Promise<number> {
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
  // The two other variables setup reads, checked as the server checks them.
  const r = new EnvReader(io.env);
  const apiRoot = readApiRoot(r);
  const timeout = r.int('TELEGRAM_TIMEOUT_MS', 10_000, 100, 120_000);
  if (r.problems.length > 0) {
    io.err(r.problems[0]);
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
