import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { SECRET_HEADER, errorText } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { ConfigError, loadServerConfig, type ServerConfig } from '../config/config';
import type { Env } from '../config/env-reader';
import { databasePathProblem, databaseUrlProblem, describeDatabaseUrl } from '../database/database';
import { openHandle } from '../database/database.module';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { SettingsRepository } from '../repositories/settings.repository';
import { CheckLines } from '../setup/bot-rights';
import type { TelegramFailure } from '../telegram/telegram-result';
import { TelegramGateway, type BotIdentity } from '../telegram/telegram.gateway';

/** A chat of the configuration and the variables its id and topic come from (a route's: one for both). */
interface ChatTarget {
  chatVar: string;
  threadVar?: string;
  chatId: string;
  threadId: number | null;
}

const ENDPOINT_TIMEOUT_MS = 5000;

/** `npm run leads -- doctor`: the server's configuration loader on `env`, then every check, one line each (FAIL names the variable to fix). */
export async function runDoctor(env: Env, out: (line: string) => void): Promise<number> {
  const summary = (problems: number) =>
    out(problems === 0 ? 'doctor: no problem found' : `doctor: ${problems} problem${problems > 1 ? 's' : ''}`);
  let config: ServerConfig;
  try {
    config = loadServerConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) out(`FAIL  config: ${problem}`);
    summary(err.problems.length);
    return 1;
  }
  if (!config.telegram.token && !config.leads.enabled) {
    // The server would start, and do nothing: no request comes in, no card goes out. Most often .env is not loaded.
    out(
      'FAIL  config: nothing is configured: no TELEGRAM_BOT_TOKEN, and POST /leads is off (LEADS_SECRET empty or LEADS_ENABLED=0); ' +
        'the CLI reads only its environment: load .env first (set -a; . ./.env; set +a)',
    );
    summary(1);
    return 1;
  }
  const doctor = new Doctor(config, env.LEADS_ENDPOINT?.trim() || null, out);
  await doctor.run();
  summary(doctor.problems);
  return doctor.problems > 0 ? 1 : 0;
}

/** The configuration the server would start with, checked against the world. */
class Doctor extends CheckLines {
  private readonly clock = new Clock();

  constructor(
    private readonly config: ServerConfig,
    /** LEADS_ENDPOINT, checked only when given. */
    private readonly endpoint: string | null,
    out: (line: string) => void,
  ) {
    super(out);
  }

  async run(): Promise<void> {
    const c = this.config;
    const db = c.databaseUrl ? 'PostgreSQL' : 'SQLite';
    const bot = !c.telegram.token ? 'no bot' : c.telegram.webhook ? 'bot by webhook' : 'bot by polling';
    this.ok(`config: every variable reads as the server reads it (${db}, ${bot}, POST /leads ${c.leads.enabled ? 'on' : 'off'})`);
    await this.checkTelegram();
    await this.checkDatabase();
    await this.checkEndpoint();
  }

  private async checkTelegram(): Promise<void> {
    const t = this.config.telegram;
    if (!t.token) {
      this.warn('TELEGRAM_BOT_TOKEN is not set: leads are stored but no card is published (npm run leads -- setup starts from a token)');
      return;
    }
    const telegram = TelegramGateway.forToken(t.token, t.apiRoot, this.config.telegramTimeoutMs);
    const me = await this.checkToken(telegram, '', (why) => `TELEGRAM_API_ROOT=${t.apiRoot}: Telegram did not answer (${why})`);
    if (!me) return;
    const targets: ChatTarget[] = t.routes.map((r) => ({ chatVar: `LEADS_ROUTES (${r.source})`, chatId: r.chatId, threadId: r.threadId }));
    if (t.leadsChatId)
      targets.unshift({ chatVar: 'LEADS_CHAT_ID', threadVar: 'LEADS_THREAD_ID', chatId: t.leadsChatId, threadId: t.leadsThreadId });
    if (t.adminChatId)
      targets.push({ chatVar: 'ADMIN_CHAT_ID', threadVar: 'ADMIN_THREAD_ID', chatId: t.adminChatId, threadId: t.adminThreadId });
    else this.warn('ADMIN_CHAT_ID is not set: alerts and the daily digest are only logged');
    for (const target of targets) await this.checkChat(telegram, me, target);
    await this.checkWebhook(telegram);
  }

  /** The bot's rights in the chat, and the topic through a chat action in it. */
  private async checkChat(telegram: TelegramGateway, me: BotIdentity, target: ChatTarget): Promise<void> {
    const name = `${target.chatVar}=${target.chatId}`;
    const bot = me.username ? `@${me.username}` : 'the bot';
    const unreachable = (chat: TelegramFailure): string => {
      if (chat.kind === 'migrated')
        return `${name}: the group became a supergroup with the id ${chat.newChatId}: set ${target.chatVar.split(' ')[0]} to it`;
      if (/chat not found/i.test(chat.description))
        return `${name}: chat not found: ${bot} is not in that chat; add it, or fix ${target.chatVar} (/stickers_chatid in the chat tells its id)`;
      if (/^403/.test(chat.description)) return `${name}: ${bot} is not in that chat any more (${chat.description}): add it again`;
      return `${name}: getChat failed (${chat.description})`;
    };
    const titled = (chat: { title?: string }) => (chat.title ? ` «${chat.title}»` : '');
    const checked = await this.checkRights(telegram, me.id, target.chatId, unreachable, (chat) => `${name}${titled(chat)}`);
    if (!checked || target.threadId === null) return;
    const title = titled(checked.chat);
    const topic = `${target.threadVar ?? `${target.chatVar} topic`}=${target.threadId}`;
    if (!checked.chat.is_forum)
      return this.fail(`${topic}:${title || ` ${target.chatId}`} has no topics: unset the topic, or turn topics on in the group`);
    const reached = await telegram.call('sendChatAction', { chat_id: target.chatId, action: 'typing', message_thread_id: target.threadId });
    if (reached.ok) this.ok(`${topic}: the topic takes messages`);
    else if (reached.kind === 'thread_gone') {
      this.fail(
        `${topic}: no open topic ${target.threadId} in${title} (${reached.description}): reopen it, or fix ${target.threadVar ?? target.chatVar} (/stickers_chatid in the topic tells it)`,
      );
    } else this.fail(`${topic}: the topic could not be reached (${reached.description})`);
  }

  /** Webhook mode: Telegram posts to our URL and delivers. Polling: no webhook in the way. */
  private async checkWebhook(telegram: TelegramGateway): Promise<void> {
    const info = await telegram.call('getWebhookInfo', {});
    if (!info.ok) return this.fail(`getWebhookInfo failed (${info.description})`);
    const hook = info.value;
    const want = this.config.telegram.webhook;
    if (!want) {
      if (hook.url)
        this.warn(`a webhook is set (${hook.url}) but TELEGRAM_WEBHOOK_URL is not: the server deletes it when it starts polling`);
      return;
    }
    const waiting = `${hook.pending_update_count} update(s) waiting`;
    if (!hook.url) {
      this.fail(
        `TELEGRAM_WEBHOOK_URL=${want.url}: Telegram has no webhook for this bot: the server sets it when it starts (is it running?)`,
      );
    } else if (hook.url !== want.url) {
      this.fail(
        `TELEGRAM_WEBHOOK_URL=${want.url}: Telegram posts this bot's updates to ${hook.url} instead (another deployment of the bot?)`,
      );
    } else if (hook.last_error_message && hook.pending_update_count > 0) {
      const ago = hook.last_error_date ? `, ${Math.max(0, Math.round(this.clock.now() / 1000 - hook.last_error_date))} s ago` : '';
      this.fail(
        `TELEGRAM_WEBHOOK_URL=${want.url}: Telegram cannot deliver (${hook.last_error_message}${ago}; ${waiting}): the URL must reach the server from the internet`,
      );
    } else {
      const last = hook.last_error_message ? `; an earlier error: ${hook.last_error_message}` : '';
      this.ok(`webhook: Telegram posts to ${hook.url} (${waiting}${last})`);
    }
  }

  /** The configured database, opened as the server would without migrating it; writes only readiness's probe row. */
  private async checkDatabase(): Promise<void> {
    const { databaseUrl, databasePath } = this.config;
    const variable = databaseUrl ? 'DATABASE_URL' : 'DATABASE_PATH';
    const where = databaseUrl ? `PostgreSQL ${describeDatabaseUrl(databaseUrl)}` : `SQLite ${databasePath}`;
    const sqliteFile = !databaseUrl && databasePath !== ':memory:';
    try {
      if (sqliteFile && !existsSync(databasePath)) {
        // No file yet: the server creates it at its first start, if it may write the nearest folder that exists.
        let folder = dirname(databasePath);
        while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
        try {
          accessSync(folder, constants.W_OK);
          return this.warn(`database: ${where} does not exist yet: the server creates and migrates it at its first start`);
        } catch {
          return this.fail(`${variable}=${databasePath}: the file does not exist and its folder ${folder} cannot be written`);
        }
      }
      const problem = databaseUrl ? await databaseUrlProblem(databaseUrl) : sqliteFile ? databasePathProblem(databasePath) : null;
      if (problem) return this.fail(problem);
      const handle = openHandle({ ...this.config, databasePoolMax: 1 });
      try {
        if (!(await new DatabaseMaintenanceRepository(handle).migrationsCurrent()))
          return this.fail(
            `database: ${where} is not migrated to this version: start this version of the server once (it migrates at start), or check ${variable}`,
          );
        const refused = await new SettingsRepository(handle.db).probeWrite(this.clock.now()).then(() => null, errorText);
        if (refused) this.fail(`database: ${where} refuses a write (${refused}): check ${variable}, the disk and its permissions`);
        else this.ok(`database: ${where} reachable, migrated, takes writes`);
      } finally {
        await handle.db.destroy();
      }
    } catch (err) {
      this.fail(`database: ${errorText(err)}`);
    }
  }

  /** Posts what the landing posts, minus the lead: a server that takes its requests answers 422 and stores nothing. */
  private async checkEndpoint(): Promise<void> {
    const url = this.endpoint;
    if (!url) return;
    const name = `LEADS_ENDPOINT=${url}`;
    let status: number;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: this.config.leads.secret },
        body: '{}',
        signal: AbortSignal.timeout(ENDPOINT_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch (err) {
      const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError'
          ? `no answer within ${ENDPOINT_TIMEOUT_MS / 1000} s`
          : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(err));
      return this.fail(`${name}: no answer (${why}): the landing could not reach the server either`);
    }
    if (status === 422) this.ok(`${name}: the server takes the landing's requests (an empty one answered 422, nothing stored)`);
    else
      this.fail(
        `${name}: ${ENDPOINT_REFUSALS[status] ?? `answered ${status} to an empty request (the server answers 422): is it the server's POST /leads?`}`,
      );
  }
}

/** What an answer other than 422 to the landing's empty request means. */
const ENDPOINT_REFUSALS: Record<number, string> = {
  401:
    'the server refused LEADS_SECRET (401): the landing and the server need the same LEADS_SECRET ' +
    '(each refused try counts toward locking this address out, the landing too if it is here: 5 in 10 minutes)',
  404: "404: the leads module is off there (LEADS_SECRET empty or LEADS_ENABLED=0), or the URL's path is not /leads",
  429: '429: this address is locked out after wrong secrets, or the server is at its limit: wait, then check LEADS_SECRET',
};
