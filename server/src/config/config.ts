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
import { EnvReader, type Env } from './env-reader';
import { botTokenProblem, readRoutes, readTelegramWebhook, type LeadsRoute, type TelegramWebhook } from './telegram-settings';
import { readWebhooks, type WebhookEndpoint } from './webhook-endpoints';

export { botTokenProblem, type LeadsRoute } from './telegram-settings';
export type { WebhookEndpoint } from './webhook-endpoints';

/**
 * Server configuration from environment variables (docs/requirements.md §10.1).
 * Bad configuration fails at start with one line per problem, never later at the first request.
 */

export interface ServerConfig {
  port: number;
  /** Null: every interface, as Node's default listen does. */
  host: string | null;
  databasePath: string;
  /**
   * DATABASE_URL (postgres://…): the server stores leads in that PostgreSQL database instead of the SQLite file at
   * DATABASE_PATH (several instances may share it). Null: SQLite, the embedded default.
   */
  databaseUrl: string | null;
  /** DATABASE_POOL_MAX: connections each instance keeps to PostgreSQL at most. */
  databasePoolMax: number;
  /**
   * How long a database operation waits, asynchronously, for a lock another connection holds (a backup tool, a
   * maintenance shell) before it fails; the submit path then answers 503. SQLite itself waits only a few ms.
   */
  databaseBusyTimeoutMs: number;
  /**
   * PostgreSQL: DATABASE_STATEMENT_TIMEOUT_MS bounds every statement of the server's sessions (`statement_timeout`;
   * the submit decision is one statement, so this bounds it too, under the landing's 5 s) and
   * DATABASE_IDLE_TX_TIMEOUT_MS a session idle inside a transaction (`idle_in_transaction_session_timeout`): an
   * instance frozen or cut off in a transaction cannot hold its locks for longer.
   */
  databaseStatementTimeoutMs: number;
  databaseIdleTxTimeoutMs: number;
  leads: {
    /**
     * A non-empty LEADS_SECRET and LEADS_ENABLED not 0; otherwise `POST /leads` answers 404. LEADS_ENABLED=1 said
     * explicitly with an empty secret is a configuration error, not a silent 404.
     */
    enabled: boolean;
    secret: string;
    ipSalt: string;
    ipLimit: number;
    ipWindowSec: number;
    hourlyLimit: number;
    /** LEADS_LATE_HOURLY_LIMIT: requests replayed from a landing's spool per hour (their own count; default the hourly limit). */
    lateHourlyLimit: number;
    cardPii: boolean;
    /**
     * LEADS_PHONE_REGION: the region a phone typed without `+` or `00` is read in (`8 916 …` for RU), for POST /leads
     * and the erasure by contact; the landing has the same setting. Stored phones are E.164 whatever it is.
     */
    phoneRegion: PhoneRegion;
    /**
     * LEADS_REQUIRED_CONTACTS: which contacts a lead must have — both (`telegram,phone`, the default), one of them, or
     * `any` (at least one); the landing has the same setting.
     */
    requiredContacts: RequiredContacts;
    /** LEADS_REQUIRE_CONSENT=1: a lead without the `consent` object is a 422 (`errors.consent: required`). */
    requireConsent: boolean;
    /**
     * LEADS_TELEGRAM_LINK_DAYS: how many days the "Continue in Telegram" link of a `POST /leads` answer opens the bot
     * (`telegram_link`); 0: no link.
     */
    telegramLinkDays: number;
    /**
     * LEADS_TELEGRAM_LINK_ROOT: where `telegram_link` points, `<root>/<bot username>?start=<payload>`; `https://t.me`
     * by default, the sandbox's stand-in for t.me in development. No trailing slash.
     */
    telegramLinkRoot: string;
    /**
     * LEADS_LANDING_URL: the landing's address, given to a person who writes to the bot without being bound to a lead
     * (null: the answer names none). An http(s) URL.
     */
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
    /**
     * Forum topics: LEADS_THREAD_ID and ADMIN_THREAD_ID, the topic (`message_thread_id`) of each chat's
     * forum supergroup that cards and the bot's messages go into. Null: the chat itself (its General topic).
     */
    leadsThreadId: number | null;
    adminThreadId: number | null;
    /**
     * Routing by source: LEADS_ROUTES, the chat (and topic) of the cards of each source (`source_landing`).
     * Empty: every card goes to LEADS_CHAT_ID / LEADS_THREAD_ID, as do leads of a source not listed.
     */
    routes: LeadsRoute[];
    /** Null: every member of the leads group may press card buttons. */
    managerIds: number[] | null;
    /**
     * TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET: Telegram posts updates to this URL (any instance
     * behind the load balancer takes them) with the secret in its header. Null: long polling, by one instance at a time.
     */
    webhook: TelegramWebhook | null;
  };
  /** How long one Bot API call may take before it counts as failed (a hanging Telegram must not stall the outbox). */
  telegramTimeoutMs: number;
  /**
   * Signed webhooks: LEADS_WEBHOOK_URL and LEADS_WEBHOOK_SECRET, comma lists of the same length, the n-th
   * secret signing for the n-th URL (and LEADS_WEBHOOK_SECRET_PREVIOUS's n-th too, during a rotation). Empty: no
   * webhooks (nothing is recorded, nothing sent).
   */
  webhooks: WebhookEndpoint[];
  /**
   * The inbox (a Telegram Mini App at `/inbox`): LEADS_INBOX_URL, its public https address that the bot's menu button
   * and `/stickers_inbox` open (null: the bot does not offer it; the app is still served); how old launch data may be
   * (LEADS_INBOX_MAX_AGE_S) and how long a getChatMember answer is trusted (LEADS_INBOX_MEMBER_CACHE_S).
   */
  inbox: { url: string | null; maxAgeSec: number; memberCacheSec: number };
  /**
   * The per-caller throttles (http/caller-throttle.ts), counted in each instance's memory: at most this many requests
   * per LEADS_THROTTLE_WINDOW_SEC from one caller, before anything else the route does; over it, 429 `why: flood`.
   * `submit` (LEADS_THROTTLE_SUBMIT): POST /leads per caller address, before the secret and the body. `api`
   * (LEADS_THROTTLE_API): GET /leads, the export and the trace per caller address, before the secret. `export`
   * (LEADS_THROTTLE_EXPORT): GET /leads/export.csv per caller address and the inbox's CSV per Telegram user. `inbox`
   * (LEADS_THROTTLE_INBOX): /inbox/api/* per Telegram user, and per caller address for launch data that does not
   * check out. `webhook` (LEADS_THROTTLE_WEBHOOK): the Telegram webhook's route per caller address.
   */
  throttle: { windowSec: number; submit: number; api: number; export: number; inbox: number; webhook: number };
  /** GET /ready turns 503 when the oldest lead without a card is older than this. */
  readyMaxOutboxAgeSec: number;
  timezone: string;
  /** LEADS_LOCALE: the language of every text the group and the admin chat see (server/src/i18n/), `ru` by default. */
  locale: Locale;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

/** LEADS_LANDING_URL: an http(s) address, or none. */
function readLandingUrl(r: EnvReader): string | null {
  const raw = r.string('LEADS_LANDING_URL');
  if (raw === '') return null;
  if (!URL.canParse(raw) || !['http:', 'https:'].includes(new URL(raw).protocol)) {
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
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    /* reported below */
  }
  const loopback = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) || url.username !== '' || url.password !== '') {
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
  if (enabledSaid === true && secret === '') {
    r.problems.push('LEADS_SECRET must be set when LEADS_ENABLED=1 (or set LEADS_ENABLED=0 to switch POST /leads off)');
  }
  const enabled = enabledSaid !== false && secret !== '';
  const ipSalt = r.string('LEADS_IP_SALT');
  if (enabled && ipSalt === '') {
    r.problems.push(
      enabledSaid === true
        ? 'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_ENABLED=1 and LEADS_SECRET set)'
        : 'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_SECRET set, LEADS_ENABLED unset; set LEADS_ENABLED=0 to switch POST /leads off)',
    );
  }
  if (enabled && secret.length < 16) {
    r.problems.push('LEADS_SECRET must be at least 16 characters long');
  }

  const token = r.string('TELEGRAM_BOT_TOKEN') || null;
  const tokenProblem = token ? botTokenProblem(token) : null;
  if (tokenProblem) r.problems.push(tokenProblem);
  // A token without a group would start, store leads and never publish one.
  if (token && !r.raw('LEADS_CHAT_ID')) {
    r.problems.push('LEADS_CHAT_ID must be set when TELEGRAM_BOT_TOKEN is set (cards would never be published)');
  }
  // A topic belongs to a chat.
  if (r.raw('LEADS_THREAD_ID') && !r.raw('LEADS_CHAT_ID'))
    r.problems.push('LEADS_THREAD_ID is set but LEADS_CHAT_ID is not (a topic of which chat?)');
  if (r.raw('ADMIN_THREAD_ID') && !r.raw('ADMIN_CHAT_ID'))
    r.problems.push('ADMIN_THREAD_ID is set but ADMIN_CHAT_ID is not (a topic of which chat?)');
  const apiRoot = r.string('TELEGRAM_API_ROOT', 'https://api.telegram.org');
  try {
    const url = new URL(apiRoot);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    r.problems.push(`TELEGRAM_API_ROOT must be an http(s) URL (got "${withoutPasswords(apiRoot)}")`);
  }

  const linkRoot = r.string('LEADS_TELEGRAM_LINK_ROOT', 'https://t.me');
  try {
    const url = new URL(linkRoot);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    r.problems.push(`LEADS_TELEGRAM_LINK_ROOT must be an http(s) URL like https://t.me (got "${withoutPasswords(linkRoot)}")`);
  }

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

  const locale = parseLocale('LEADS_LOCALE', r.raw('LEADS_LOCALE'));
  if (!locale.ok) r.problems.push(locale.error);

  const phoneRegion = parsePhoneRegion(r.raw('LEADS_PHONE_REGION'));
  if (!phoneRegion.ok) r.problems.push(phoneRegion.error);
  const requiredContacts = parseRequiredContacts(r.raw('LEADS_REQUIRED_CONTACTS'));
  if (!requiredContacts.ok) r.problems.push(requiredContacts.error);

  const logLevel = r.string('LOG_LEVEL', 'info').toLowerCase();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    r.problems.push(`LOG_LEVEL must be debug, info, warn or error (got "${logLevel}")`);
  }

  const host = r.string('HOST') || null;
  const databaseBusyTimeoutMs = r.int('DATABASE_BUSY_TIMEOUT_MS', 3000, 0, 600_000);
  const hourlyLimit = r.int('LEADS_HOURLY_LIMIT', 60, 1);
  if (host !== null && isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/.test(host)) {
    r.problems.push(`HOST must be an IP address like 127.0.0.1 or a host name (got "${host}")`);
  }

  const databaseUrl = r.string('DATABASE_URL') || null;
  if (databaseUrl !== null) {
    let url: URL | null = null;
    try {
      url = new URL(databaseUrl);
    } catch {
      /* reported below */
    }
    if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || (!url.hostname && !url.searchParams.get('host'))) {
      // The value may hold a password: the line names the variable and the expected form, not what was given.
      r.problems.push('DATABASE_URL must be a PostgreSQL URL like postgres://user:password@host:5432/leads (or unset for SQLite)');
    }
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
      phoneRegion: phoneRegion.ok ? phoneRegion.value : 'RU',
      requiredContacts: requiredContacts.ok ? requiredContacts.value : 'telegram,phone',
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
    locale: locale.ok ? locale.value : 'ru',
    logLevel: logLevel as ServerConfig['logLevel'],
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
