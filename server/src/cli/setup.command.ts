import { createInterface } from 'node:readline';
import { Clock } from '../clock/clock';
import { EnvReader } from '../config/env-reader';
import { botTokenProblem, readApiRoot } from '../config/telegram-settings';
import type { SetupOptions } from '../setup/setup-session';
import { SetupService } from '../setup/setup.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

/** `npm run leads -- setup`: needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_ROOT for the sandbox), no other variable, no server. */
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
  const rl = io.stdin?.isTTY === true ? createInterface({ input: io.stdin, terminal: false }) : null;
  // At a terminal readline takes Ctrl-C itself: pass it on as the stop it means.
  rl?.on('SIGINT', () => stop.abort());
  try {
    const telegram = TelegramGateway.forToken(token, apiRoot, timeout);
    return await new SetupService(telegram, io.out, rl, new Clock(), { ...options, signal: stop.signal }).run();
  } finally {
    rl?.close();
  }
}
