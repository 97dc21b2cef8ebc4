import { createInterface } from 'node:readline';
import { parseLocale } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { EnvReader } from '../config/env-reader';
import { botTokenProblem, readApiRoot } from '../config/telegram-settings';
import { CATALOGUES } from '../i18n';
import type { SetupFlags } from '../setup/setup-session';
import { SetupService } from '../setup/setup.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

/**
 * `npm run leads -- setup`: needs TELEGRAM_BOT_TOKEN (and TELEGRAM_API_ROOT for the sandbox, LEADS_LOCALE for English),
 * no other variable, no server.
 */
export async function runSetup(io: CliIo, options: SetupFlags): Promise<number> {
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
  // The other variables setup reads, checked as the server checks them: what it posts is in LEADS_LOCALE's language.
  const r = new EnvReader(io.env);
  const apiRoot = readApiRoot(r);
  const timeout = r.int('TELEGRAM_TIMEOUT_MS', 10_000, 100, 120_000);
  const locale = r.parsed(parseLocale('LEADS_LOCALE', r.raw('LEADS_LOCALE')), 'ru');
  if (r.problems.length > 0) {
    for (const problem of r.problems) io.err(problem);
    return 1;
  }
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const rl = io.stdin?.isTTY === true ? createInterface({ input: io.stdin, terminal: false }) : null;
  // At a terminal readline takes Ctrl-C itself: pass it on as the stop it means.
  rl?.on('SIGINT', () => stop.abort());
  try {
    const telegram = TelegramGateway.forToken(token, apiRoot, timeout);
    return await new SetupService(telegram, io.out, rl, new Clock(), {
      ...options,
      signal: stop.signal,
      texts: CATALOGUES[locale].setup,
    }).run();
  } finally {
    rl?.close();
  }
}
