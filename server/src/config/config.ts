import { isIP } from 'node:net';
import {
  parseLocale,
  parsePhoneRegion,
  parseRequiredContacts,
  type Locale,
  type PhoneRegion,
  type RequiredContacts,
  withoutPasswords,
} from '@stickers/shared';
import { EnvReader, httpUrl, type Env } from './env-reader';
import { botTokenProblem, readRoutes, readTelegramWebhook, type LeadsRoute, type TelegramWebhook } from './telegram-settings';
import { readWebhooks, type WebhookEndpoint } from './webhook-endpoints';

export type { LeadsRoute } from './telegram-settings';

/**
 * Server configuration from environment variables (docs/requirements.md §10.1, docs/configuration.md): a bad one fails
 * at start with one line per problem, never later at the first request.
 */
export interface ServerConfig {
  port: number;
  /** Null: every interface, as Node's default listen does. */
  host: string | null;
  databasePath: string;
  /** DATABASE_URL (postgres://…): PostgreSQL instead of the SQLite file at DATABASE_PATH (several instances may share it). */
  databaseUrl: string | null;
  /** DATABASE_POOL_MAX: connections each instance keeps to PostgreSQL at most. */
  databasePoolMax: number;
  /** How long an operation waits for a lock another connection holds before it fails (the submit path then answers 503). */
  databaseBusyTimeoutMs: number;
  /** PostgreSQL's `statement_timeout` (under the landing's 5 s) and `idle_in_transaction_session_timeout` of the server's sessions. */
  databaseStatementTimeoutMs: number;
  databaseIdleTxTimeoutMs: number;
  leads: {
    /** A non-empty LEADS_SECRET and LEADS_ENABLED not 0; otherwise `POST /leads` answers 404. */
    enabled: boolean;
    secret: string;
    ipSalt: string;
    ipLimit: number;
    ipWindowSec: number;
    hourlyLimit: number;
    /** Requests replayed from a landing's spool per hour (their own count). */
    lateHourlyLimit: number;
    cardPii: boolean;
    /** The region a phone typed without `+` or `00` is read in, for POST /leads and the erasure by contact. */
    phoneRegion: PhoneRegion;
    requiredContacts: RequiredContacts;
    /** A lead without the `consent` object is a 422. */
    requireConsent: boolean;
    /** Days the `telegram_link` of a `POST /leads` answer opens the bot; 0: no link. */
    telegramLinkDays: number;
    /** Where `telegram_link` points (`<root>/<bot username>?start=<payload>`), no trailing slash. */
    telegramLinkRoot: string;
    /** The landing's address, given to a person who writes to the bot without being bound to a lead. */
    landingUrl: string | null;
  };
  publishIntervalSec: number;
  housekeeping: {
    /** A card still `new` after this many minutes gets one reminder reply. */
    remindAfterMin: number;
    /** The daily digest's local time, minutes after midnight in LEADS_TIMEZONE. */
    digestAtMin: number;
    /** Leads older than this are anonymised. */
    retentionDays: number;
  };
  telegram: {
    /** Null: leads are stored, publishing and alerts are paused (logged at start). */
    token: string | null;
    apiRoot: string;
    leadsChatId: string | null;
    adminChatId: string | null;
    /** The forum topic (`message_thread_id`) of each chat; null: the chat itself (its General topic). */
    leadsThreadId: number | null;
    adminThreadId: number | null;
    /** LEADS_ROUTES: the chat (and topic) of each source's cards; a source not listed goes to LEADS_CHAT_ID. */
    routes: LeadsRoute[];
    /** Null: every member of the leads group may press card buttons. */
    managerIds: number[] | null;
    /** Null: long polling, by one instance at a time. */
    webhook: TelegramWebhook | null;
  };
  /** How long one Bot API call may take before it counts as failed. */
  telegramTimeoutMs: number;
  /** Signed webhooks to integrators; empty: nothing recorded, nothing sent. */
  webhooks: WebhookEndpoint[];
  /** The inbox Mini App: its public address the bot offers (null: not offered), the launch data's age, the member cache. */
  inbox: { url: string | null; maxAgeSec: number; memberCacheSec: number };
  /** The per-caller throttles (http/caller-throttle.ts): requests per window from one caller, in each instance's memory. */
  throttle: { windowSec: number; submit: number; api: number; export: number; inbox: number; webhook: number };
  /** GET /ready turns 503 when the oldest lead without a card is older than this. */
  readyMaxOutboxAgeSec: number;
  timezone: string;
  /** The language of every text the group and the admin chat see (server/src/i18n/). */
  locale: Locale;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

/** LEADS_LANDING_URL: an http(s) address, or none. */
function readLandingUrl(r: EnvReader): string | null {
  const raw = r.string('LEADS_LANDING_URL');
  if (raw === '') return null;
  if (!httpUrl(raw)) {
    r.problems.push(`LEADS_LANDING_URL must be the landing's http(s) address like https://stickers.example.com (got "${raw}")`);
    return null;
  }
  return raw;
}

/**
 * LEADS_INBOX_URL: https (Telegram opens Mini Apps over https only), or http on the loopback for development (the
 * sandbox opens it as a plain link). No user name or password in it.
 */
function readInboxUrl(r: EnvReader): string | null {
  const raw = r.string('LEADS_INBOX_URL');
  if (raw === '') return null;
  const url = httpUrl(raw);
  const loopback = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (!url || (url.protocol === 'http:' && !loopback) || url.username !== '' || url.password !== '') {
    r.problems.push(
      `LEADS_INBOX_URL must be the inbox's public https address like https://leads.example.com/inbox (http only on localhost) (got "${raw}")`,
    );
    return null;
  }
  return url.toString();
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadServerConfig(env: Env): ServerConfig {
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
  if (r.raw('LEADS_THREAD_ID') && !r.raw('LEADS_CHAT_ID'))
    r.problems.push('LEADS_THREAD_ID is set but LEADS_CHAT_ID is not (a topic of which chat?)');
  if (r.raw('ADMIN_THREAD_ID') && !r.raw('ADMIN_CHAT_ID'))
    r.problems.push('ADMIN_THREAD_ID is set but ADMIN_CHAT_ID is not (a topic of which chat?)');
  const apiRoot = r.string('TELEGRAM_API_ROOT', 'https://api.telegram.org');
  if (!httpUrl(apiRoot)) r.problems.push(`TELEGRAM_API_ROOT must be an http(s) URL (got "${withoutPasswords(apiRoot)}")`);

  const linkRoot = r.string('LEADS_TELEGRAM_LINK_ROOT', 'https://t.me');
  if (!httpUrl(linkRoot))
    r.problems.push(`LEADS_TELEGRAM_LINK_ROOT must be an http(s) URL like https://t.me (got "${withoutPasswords(linkRoot)}")`);

  const webhook = readTelegramWebhook(r, token);

  let managerIds: number[] | null = null;
  const managers = r.string('LEADS_MANAGER_IDS');
  if (managers) {
    const parts = managers
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (parts.every((p) => /^\d{1,20}$/.test(p))) managerIds = parts.map(Number);
    else r.problems.push(`LEADS_MANAGER_IDS must be a comma-separated list of Telegram user ids (got "${managers}")`);
  }

  const timezone = r.string('LEADS_TIMEZONE', 'Europe/Moscow');
  try {
    new Intl.DateTimeFormat('ru-RU', { timeZone: timezone });
  } catch {
    r.problems.push(`LEADS_TIMEZONE must be an IANA time zone like Europe/Moscow (got "${timezone}")`);
  }

  const locale = r.parsed(parseLocale('LEADS_LOCALE', r.raw('LEADS_LOCALE')), 'ru');
  const phoneRegion = r.parsed(parsePhoneRegion(r.raw('LEADS_PHONE_REGION')), 'RU');
  const requiredContacts = r.parsed(parseRequiredContacts(r.raw('LEADS_REQUIRED_CONTACTS')), 'telegram,phone');

  const logLevel = r.string('LOG_LEVEL', 'info').toLowerCase();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    r.problems.push(`LOG_LEVEL must be debug, info, warn or error (got "${logLevel}")`);

  const host = r.string('HOST') || null;
  const databaseBusyTimeoutMs = r.int('DATABASE_BUSY_TIMEOUT_MS', 3000, 0, 600_000);
  const hourlyLimit = r.int('LEADS_HOURLY_LIMIT', 60, 1);
  if (host !== null && isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/.test(host))
    r.problems.push(`HOST must be an IP address like 127.0.0.1 or a host name (got "${host}")`);

  const databaseUrl = r.string('DATABASE_URL') || null;
  if (databaseUrl !== null) {
    const url = URL.canParse(databaseUrl) ? new URL(databaseUrl) : null;
    // The value may hold a password: the line names the variable and the expected form, not what was given.
    if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || (!url.hostname && !url.searchParams.get('host')))
      r.problems.push('DATABASE_URL must be a PostgreSQL URL like postgres://user:password@host:5432/leads (or unset for SQLite)');
  }

  const config: ServerConfig = {
    port: r.int('PORT', 3000, 0, 65535),
    host,
    databasePath: r.string('DATABASE_PATH', './data/leads.sqlite'),
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
      landingUrl: readLandingUrl(r),
    },
    publishIntervalSec: r.int('PUBLISH_INTERVAL_SEC', 2, 1, 3600),
    housekeeping: {
      remindAfterMin: r.int('LEADS_REMIND_AFTER_MIN', 30, 1, 7 * 24 * 60),
      digestAtMin: r.time('LEADS_DIGEST_AT', 9 * 60),
      retentionDays: r.int('LEADS_RETENTION_DAYS', 180, 1, 36500),
    },
    telegram: {
      token,
      apiRoot,
      webhook,
      leadsChatId: r.chatId('LEADS_CHAT_ID'),
      adminChatId: r.chatId('ADMIN_CHAT_ID'),
      leadsThreadId: r.threadId('LEADS_THREAD_ID'),
      adminThreadId: r.threadId('ADMIN_THREAD_ID'),
      routes: readRoutes(r),
      managerIds,
    },
    telegramTimeoutMs: r.int('TELEGRAM_TIMEOUT_MS', 10_000, 100, 120_000),
    webhooks: readWebhooks(r),
    inbox: {
      url: readInboxUrl(r),
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
    logLevel: logLevel as ServerConfig['logLevel'],
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
