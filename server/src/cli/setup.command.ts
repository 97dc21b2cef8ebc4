import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Clock } from '../clock/clock';
import { EnvReader } from '../config/env-reader';
import { botTokenProblem, readApiRoot } from '../config/telegram-settings';
import type { SetupOptions } from '../setup/setup-session';
import { SetupService } from '../setup/setup.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

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
  // Setup's conversation: lines to `out`; at a terminal, answers and Enter read from stdin.
  const rl = io.stdin?.isTTY === true ? createInterface({ input: io.stdin, terminal: false }) : null;
  // At a terminal readline takes Ctrl-C itself: pass it on as the stop it means.
  rl?.on('SIGINT', () => stop.abort());
  /** The next line typed; never without a terminal, or once `signal` aborts. */
  const line = (signal?: AbortSignal) => (rl ? once(rl, 'line', { signal }).then(([text]) => String(text), never) : never());
  try {
    const setup = new SetupService(
      TelegramGateway.forToken(token, apiRoot, timeout),
      {
        interactive: rl !== null,
        say: io.out,
        ask: async (question) => {
          if (!rl) return null;
          io.out(question);
          return line();
        },
        enter: async (signal) => void (await line(signal)),
      },
      new Clock(),
      { ...options, signal: stop.signal },
    );
    return await setup.run();
  } finally {
    rl?.close();
  }
}

const never = () => new Promise<never>(() => undefined);
