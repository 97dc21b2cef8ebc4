import { isIP } from 'node:net';
import { parseLocale, parsePhoneRegion, parseRequiredContacts } from '@stickers/shared';
import { EnvReader, httpUrl, type Env } from './env-reader';
import { botTokenProblem, readApiRoot, readRoutes, readTelegramWebhook } from './telegram-settings';
import { readWebhooks } from './webhook-endpoints';

export type { LeadsRoute } from './telegram-settings';

/** The configuration from the environment (docs/configuration.md): a bad one fails at start, one line per problem. */
export type ServerConfig = ReturnType<typeof loadServerConfig>;

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/;
const urlAsGiven = (v: string) => httpUrl(v) && v;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadServerConfig(env: Env) {
  const r = new EnvReader(env);
  const secret = r.string('LEADS_SECRET');
  const enabledSaid = r.raw('LEADS_ENABLED') ? r.flag('LEADS_ENABLED', true) : null;
  // Said on purpose and not usable: every lead would get 404 and go to the landing's fallback, unnoticed.
  if (enabledSaid === true && secret === '')
    r.problems.push('LEADS_SECRET must be set when LEADS_ENABLED=1 (or set LEADS_ENABLED=0 to switch POST /leads off)');
  const enabled = enabledSaid !== false && secret !== '';
  const ipSalt = r.string('LEADS_IP_SALT');
  if (enabled && ipSalt === '') {
    r.problems.push(
      enabledSaid === true
        ? 'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_ENABLED=1 and LEADS_SECRET set)'
        : 'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_SECRET set, LEADS_ENABLED unset; set LEADS_ENABLED=0 to switch POST /leads off)',
    );
  }
  if (enabled && secret.length < 16) r.problems.push('LEADS_SECRET must be at least 16 characters long');

  const token = r.string('TELEGRAM_BOT_TOKEN') || null;
  const tokenProblem = token && botTokenProblem(token);
  if (tokenProblem) r.problems.push(tokenProblem);
  // A token without a group would start, store leads and never publish one.
  if (token && !r.raw('LEADS_CHAT_ID'))
    r.problems.push('LEADS_CHAT_ID must be set when TELEGRAM_BOT_TOKEN is set (cards would never be published)');
  // A topic belongs to a chat.
  for (const chat of ['LEADS', 'ADMIN'])
    if (r.raw(`${chat}_THREAD_ID`) && !r.raw(`${chat}_CHAT_ID`))
      r.problems.push(`${chat}_THREAD_ID is set but ${chat}_CHAT_ID is not (a topic of which chat?)`);
  const apiRoot = readApiRoot(r);
  const linkRoot = r.valid('LEADS_TELEGRAM_LINK_ROOT', 'https://t.me', 'an http(s) URL like https://t.me', urlAsGiven);
  const webhook = readTelegramWebhook(r, token);
  const managerIds = r.valid('LEADS_MANAGER_IDS', null, 'a comma-separated list of Telegram user ids', (v) => {
    const ids = v.split(/\s*,\s*/).filter(Boolean);
    return ids.every((id) => /^\d{1,20}$/.test(id)) ? ids.map(Number) : null;
  });
  const timezone = r.valid('LEADS_TIMEZONE', 'Europe/Moscow', 'an IANA time zone like Europe/Moscow', (v) => {
    try {
      new Intl.DateTimeFormat('ru-RU', { timeZone: v });
      return v;
    } catch {
      return null;
    }
  });
  const locale = r.parsed(parseLocale('LEADS_LOCALE', r.raw('LEADS_LOCALE')), 'ru');
  const phoneRegion = r.parsed(parsePhoneRegion(r.raw('LEADS_PHONE_REGION')), 'RU');
  const requiredContacts = r.parsed(parseRequiredContacts(r.raw('LEADS_REQUIRED_CONTACTS')), 'telegram,phone');
  const logLevel = r.valid<(typeof LOG_LEVELS)[number]>(
    'LOG_LEVEL',
    'info',
    'debug, info, warn or error',
    (v) => LOG_LEVELS.find((level) => level === v) ?? null,
    r.raw('LOG_LEVEL')?.toLowerCase(),
  );
  const databaseBusyTimeoutMs = r.int('DATABASE_BUSY_TIMEOUT_MS', 3000, 0, 600_000);
  const hourlyLimit = r.int('LEADS_HOURLY_LIMIT', 60, 1);
  // Telegram opens Mini Apps over https only; the sandbox opens a loopback http one as a plain link.
  const inboxUrl = r.valid(
    'LEADS_INBOX_URL',
    null,
    "the inbox's public https address like https://leads.example.com/inbox (http only on localhost)",
    (v) => {
      const url = httpUrl(v);
      const loopback = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
      return url && (url.protocol === 'https:' || loopback) && url.username === '' && url.password === '' ? url.toString() : null;
    },
  );
  const host = r.valid('HOST', null, 'an IP address like 127.0.0.1 or a host name', (v) => (isIP(v) || HOST_NAME.test(v) ? v : null));
  const { databasePath, databaseUrl } = readDatabaseVariables(r);

  const config = {
    port: r.int('PORT', 3000, 0, 65535),
    host,
    databasePath,
    databaseBusyTimeoutMs,
    databaseUrl,
    databasePoolMax: r.int('DATABASE_POOL_MAX', 10, 1, 1000),
    // A second past the lock's bound by default (4 s): a lock wait ends as 55P03 first, and all is over before the landing's 5 s.
    databaseStatementTimeoutMs: r.int('DATABASE_STATEMENT_TIMEOUT_MS', databaseBusyTimeoutMs + 1000, 100, 601_000),
    databaseIdleTxTimeoutMs: r.int('DATABASE_IDLE_TX_TIMEOUT_MS', 2000, 100, 600_000),
    leads: {
      enabled,
      secret,
      ipSalt,
      ipLimit: r.int('LEADS_IP_LIMIT', 5, 1),
      ipWindowSec: r.int('LEADS_IP_WINDOW_SEC', 600, 1),
      hourlyLimit,
      lateHourlyLimit: r.int('LEADS_LATE_HOURLY_LIMIT', hourlyLimit, 1),
      cardPii: r.flag('LEADS_CARD_PII', true),
      phoneRegion,
      requiredContacts,
      requireConsent: r.flag('LEADS_REQUIRE_CONSENT', false),
      telegramLinkDays: r.int('LEADS_TELEGRAM_LINK_DAYS', 7, 0, 365),
      telegramLinkRoot: linkRoot.replace(/\/+$/, ''),
      landingUrl: r.valid('LEADS_LANDING_URL', null, "the landing's http(s) address like https://stickers.example.com", urlAsGiven),
    },
    publishIntervalSec: r.int('PUBLISH_INTERVAL_SEC', 2, 1, 3600),
    housekeeping: {
      remindAfterMin: r.int('LEADS_REMIND_AFTER_MIN', 30, 1, 7 * 24 * 60),
      digestAtMin: r.time('LEADS_DIGEST_AT', 9 * 60),
      retentionDays: r.int('LEADS_RETENTION_DAYS', 180, 1, 36500),
    },
    telegram: {
      /** Null: leads are stored, publishing and alerts are paused (logged at start). */
      token,
      apiRoot,
      /** Null: long polling, by one instance at a time. */
      webhook,
      leadsChatId: r.chatId('LEADS_CHAT_ID'),
      adminChatId: r.chatId('ADMIN_CHAT_ID'),
      leadsThreadId: r.threadId('LEADS_THREAD_ID'),
      adminThreadId: r.threadId('ADMIN_THREAD_ID'),
      routes: readRoutes(r),
      /** Null: every member of the leads group may press card buttons. */
      managerIds,
    },
    telegramTimeoutMs: r.int('TELEGRAM_TIMEOUT_MS', 10_000, 100, 120_000),
    webhooks: readWebhooks(r),
    inbox: {
      url: inboxUrl,
      maxAgeSec: r.int('LEADS_INBOX_MAX_AGE_S', 3600, 1, 7 * 24 * 3600),
      memberCacheSec: r.int('LEADS_INBOX_MEMBER_CACHE_S', 60, 0, 24 * 3600),
    },
    throttle: {
      windowSec: r.int('LEADS_THROTTLE_WINDOW_SEC', 60, 1, 24 * 3600),
      submit: r.int('LEADS_THROTTLE_SUBMIT', 600, 1),
      api: r.int('LEADS_THROTTLE_API', 120, 1),
      export: r.int('LEADS_THROTTLE_EXPORT', 10, 1),
      inbox: r.int('LEADS_THROTTLE_INBOX', 300, 1),
      webhook: r.int('LEADS_THROTTLE_WEBHOOK', 1200, 1),
    },
    readyMaxOutboxAgeSec: r.int('READY_MAX_OUTBOX_AGE_SEC', 600, 1),
    timezone,
    locale,
    logLevel,
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** DATABASE_URL (PostgreSQL) and DATABASE_PATH (SQLite), as the server and `npm run leads` read them. */
export function readDatabaseVariables(r: EnvReader): { databasePath: string; databaseUrl: string | null } {
  const databaseUrl = r.string('DATABASE_URL') || null;
  const pgUrl = databaseUrl && URL.canParse(databaseUrl) ? new URL(databaseUrl) : null;
  // The value may hold a password: the line names the variable and the expected form, not what was given.
  if (
    databaseUrl &&
    (!pgUrl || !['postgres:', 'postgresql:'].includes(pgUrl.protocol) || (!pgUrl.hostname && !pgUrl.searchParams.get('host')))
  )
    r.problems.push('DATABASE_URL must be a PostgreSQL URL like postgres://user:password@host:5432/leads (or unset for SQLite)');
  return { databasePath: r.string('DATABASE_PATH', './data/leads.sqlite'), databaseUrl };
}
