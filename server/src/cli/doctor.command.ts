import { Clock } from '../clock/clock';
import { ConfigError, loadServerConfig, type ServerConfig } from '../config/config';
import { type CheckStatus, DoctorService } from '../doctor/doctor.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { CliIo } from './cli-io';

const LABEL: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

function summary(problems: number): string {
  return problems === 0 ? 'doctor: no problem found' : `doctor: ${problems} problem${problems > 1 ? 's' : ''}`;
}

/**
 * `npm run leads -- doctor` (docs/requirements.md §16.3): the server's own configuration loader on this environment,
 * then every check of DoctorService. Exit 1 on any problem.
 */
export async function runDoctor(io: CliIo): Promise<number> {
  let config: ServerConfig;
  try {
    config = loadServerConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) io.out(`FAIL  config: ${problem}`);
    io.out(summary(err.problems.length));
    return 1;
  }
  if (!config.telegram.token && !config.leads.enabled) {
    // The server would start, and do nothing: no request comes in, no card goes out. Most often .env is not loaded.
    io.out(
      'FAIL  config: nothing is configured: no TELEGRAM_BOT_TOKEN, and POST /leads is off (LEADS_SECRET empty or LEADS_ENABLED=0); ' +
        'the CLI reads only its environment: load .env first (set -a; . ./.env; set +a)',
    );
    io.out(summary(1));
    return 1;
  }
  const { token, apiRoot } = config.telegram;
  const telegram = token ? TelegramGateway.forToken(token, apiRoot, config.telegramTimeoutMs) : null;
  const doctor = new DoctorService(config, telegram, io.env.LEADS_ENDPOINT?.trim() || null, new Clock());
  const lines = await doctor.run();
  for (const line of lines) io.out(`${LABEL[line.status]}  ${line.text}`);
  const problems = lines.filter((l) => l.status === 'fail').length;
  io.out(summary(problems));
  return problems > 0 ? 1 : 0;
}
