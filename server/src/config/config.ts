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

/**
 * TELEGRAM_BOT_TOKEN's form, checked before any call to Telegram (the server's start, doctor, setup): a token of
 * another form would only be refused by Telegram, after its URL went out. The line never quotes the token.
 */
export function botTokenProblem(token: string): string | null {
  return /^\d+:[A-Za-z0-9_-]+$/.test(token) ? null : 'TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (as BotFather gives it)';
}

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
    webhook: { url: string; path: string; secret: string } | null;
  };
  /** How long one Bot API call may take before it counts as failed (a hanging Telegram must not stall the outbox). */
  telegramTimeoutMs: number;
  /**
   * Signed webhooks: LEADS_WEBHOOK_URL and LEADS_WEBHOOK_SECRET, comma lists of the same length, the n-th
   * secret signing for the n-th URL. Empty: no webhooks (nothing is recorded, nothing sent).
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

/** One entry of LEADS_ROUTES: the leads of `source` (their `source_landing`) get their cards in this chat and topic. */
export interface LeadsRoute {
  source: string;
  chatId: string;
  threadId: number | null;
}

/** A route's source name: LANDING_SOURCE's rule (letters, digits, `_`, `-`, `.`; up to 64, first a letter or digit). */
const ROUTE_SOURCE = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u;
const CHAT_ID = /^-?\d{1,20}$|^@[A-Za-z][A-Za-z0-9_]{4,31}$/;
const THREAD_ID = /^[1-9]\d{0,15}$/;

/**
 * LEADS_ROUTES=wedding=-1001111111111:12,corporate=-1002222222222 — `source=chat` or `source=chat:topic`, comma
 * separated; each source once (names compared without case). One problem line per bad entry, naming it.
 */
function readRoutes(r: Reader): LeadsRoute[] {
  const raw = r.string('LEADS_ROUTES');
  if (raw === '') return [];
  const before = r.problems.length;
  const routes: LeadsRoute[] = [];
  const seen = new Set<string>();
  raw.split(',').forEach((part, i) => {
    const entry = part.trim();
    const m = /^([^=]*)=([^:]*)(?::(.*))?$/.exec(entry);
    const source = m?.[1].trim() ?? '';
    const chatId = m?.[2].trim() ?? '';
    const thread = m?.[3]?.trim();
    const name = `LEADS_ROUTES entry ${i + 1} ("${entry}")`;
    if (!m || !ROUTE_SOURCE.test(source)) {
      r.problems.push(`${name} must be source=chat_id or source=chat_id:topic_id, the source a name like wedding (as LANDING_SOURCE)`);
    } else if (!CHAT_ID.test(chatId)) {
      r.problems.push(`${name} must name a numeric chat id like -1001234567890 after the "="`);
    } else if (thread !== undefined && !THREAD_ID.test(thread)) {
      r.problems.push(`${name} must have a positive whole topic id after the ":" (message_thread_id), or none`);
    } else if (seen.has(source.toLowerCase())) {
      r.problems.push(`${name} repeats the source "${source}" (each source once)`);
    } else {
      seen.add(source.toLowerCase());
      routes.push({ source, chatId, threadId: thread === undefined ? null : Number(thread) });
    }
  });
  return r.problems.length > before ? [] : routes;
}

/** One webhook endpoint: where events are posted and the secret that signs them (`Stickers-Signature`). */
export interface WebhookEndpoint {
  url: string;
  secret: string;
}

/** At most this many webhook endpoints. */
export const MAX_WEBHOOK_ENDPOINTS = 10;

/**
 * LEADS_WEBHOOK_URL=https://a/x,https://b/y with LEADS_WEBHOOK_SECRET=s1,s2: both or neither, as many secrets as URLs,
 * each URL http(s) and given once, each secret 16–256 characters without spaces. A URL is never printed (its path or
 * query may hold a token): a problem names the entry by its position.
 */
function readWebhooks(r: Reader): WebhookEndpoint[] {
  const urlsRaw = r.string('LEADS_WEBHOOK_URL');
  const secretsRaw = r.string('LEADS_WEBHOOK_SECRET');
  if (urlsRaw === '' && secretsRaw === '') return [];
  if (secretsRaw === '') {
    r.problems.push('LEADS_WEBHOOK_SECRET must be set with LEADS_WEBHOOK_URL (one secret per URL, comma-separated)');
    return [];
  }
  if (urlsRaw === '') {
    r.problems.push('LEADS_WEBHOOK_URL must be set with LEADS_WEBHOOK_SECRET (set both for webhooks, neither for none)');
    return [];
  }
  const urls = urlsRaw.split(',').map((u) => u.trim());
  const secrets = secretsRaw.split(',').map((s) => s.trim());
  const before = r.problems.length;
  if (urls.length > MAX_WEBHOOK_ENDPOINTS) {
    r.problems.push(`LEADS_WEBHOOK_URL must list at most ${MAX_WEBHOOK_ENDPOINTS} URLs (got ${urls.length})`);
  }
  if (urls.length !== secrets.length) {
    r.problems.push(
      `LEADS_WEBHOOK_SECRET must list one secret per URL of LEADS_WEBHOOK_URL, in the same order (got ${secrets.length} secrets for ${urls.length} URLs)`,
    );
  }
  const seen = new Set<string>();
  urls.forEach((raw, i) => {
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      /* reported below */
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      r.problems.push(`LEADS_WEBHOOK_URL entry ${i + 1} must be an http(s) URL like https://crm.example.com/hooks/leads`);
    } else if (url.username !== '' || url.password !== '') {
      // fetch refuses such a URL (and its error would quote it, password and all): never delivered, only leaked.
      r.problems.push(
        `LEADS_WEBHOOK_URL entry ${i + 1} must not hold a user name or password (user:password@); the signature authenticates, a token may go in the path or query`,
      );
    } else if (seen.has(url.toString())) {
      r.problems.push(`LEADS_WEBHOOK_URL entry ${i + 1} repeats an earlier URL (each endpoint once)`);
    } else {
      seen.add(url.toString());
    }
  });
  secrets.forEach((secret, i) => {
    if (!/^\S{16,256}$/.test(secret)) {
      r.problems.push(`LEADS_WEBHOOK_SECRET entry ${i + 1} must be 16–256 characters without spaces or commas`);
    }
  });
  if (r.problems.length > before) return [];
  return urls.map((url, i) => ({ url: new URL(url).toString(), secret: secrets[i] }));
}

/** A path the router takes literally: no `:`, `*`, brackets or other pattern characters (percent escapes allowed). */
const WEBHOOK_PATH = /^\/(?:[A-Za-z0-9/._~-]|%[0-9A-Fa-f]{2})*$/;

/** The server's own routes (controllers and the POST /leads mount), as one problem line names them. */
const SERVER_ROUTES = '/leads (and every path under it), /health, /ready, /metrics and /openapi.json';

/**
 * Whether another route of this server answers `path` (Express matches without case and with or without one trailing
 * slash): `/leads` (POST /leads, GET /leads) and everything under it (export.csv, the trace), and the observability
 * routes. The Telegram webhook there would never see an update: POST /leads would answer 401 to each and count it
 * toward the wrong-secret lockout.
 */
function servedByServer(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* the raw path is checked */
  }
  return [path, decoded].some((p) => {
    const key = p.toLowerCase().replace(/\/+$/, '');
    return key === '/leads' || key.startsWith('/leads/') || ['/health', '/ready', '/metrics', '/openapi.json'].includes(key);
  });
}

/**
 * LEADS_INBOX_URL: https (Telegram opens Mini Apps over https only), or http on the loopback for development (the
 * sandbox opens it as a plain link). No user name or password in it.
 */
function readInboxUrl(r: Reader): string | null {
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

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined ? undefined : v.trim();
  }

  string(name: string, fallback = ''): string {
    return this.raw(name) || fallback;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw(name);
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${v}")`);
      return fallback;
    }
    return Number(v);
  }

  flag(name: string, fallback: boolean): boolean {
    const v = this.raw(name)?.toLowerCase();
    if (v === undefined || v === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    this.problems.push(`${name} must be 1 or 0 (got "${v}")`);
    return fallback;
  }

  /** `HH:MM` (24 h) as minutes after midnight. */
  time(name: string, fallback: number): number {
    const v = this.raw(name);
    if (v === undefined || v === '') return fallback;
    const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(v);
    if (!m) {
      this.problems.push(`${name} must be a time like 09:00 (got "${v}")`);
      return fallback;
    }
    return Number(m[1]) * 60 + Number(m[2]);
  }

  /** An optional forum topic id (`message_thread_id`): a positive whole number. */
  threadId(name: string): number | null {
    const v = this.raw(name);
    if (!v) return null;
    if (!THREAD_ID.test(v)) {
      this.problems.push(`${name} must be a topic id (message_thread_id), a positive whole number like 12 (got "${v}")`);
      return null;
    }
    return Number(v);
  }

  chatId(name: string): string | null {
    const v = this.raw(name);
    if (!v) return null;
    if (!/^-?\d{1,20}$/.test(v) && !/^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(v)) {
      this.problems.push(`${name} must be a numeric chat id like -1001234567890 or @channelname (got "${v}")`);
      return null;
    }
    return v;
  }
}

export function loadServerConfig(env: Env): ServerConfig {
  const r = new Reader(env);
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

  const webhookUrl = r.string('TELEGRAM_WEBHOOK_URL') || null;
  const webhookSecret = r.string('TELEGRAM_WEBHOOK_SECRET') || null;
  let webhook: ServerConfig['telegram']['webhook'] = null;
  if (webhookUrl !== null) {
    let url: URL | null = null;
    try {
      url = new URL(webhookUrl);
    } catch {
      /* reported below */
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      r.problems.push(`TELEGRAM_WEBHOOK_URL must be the https URL Telegram posts updates to (got "${webhookUrl}")`);
    } else if (!token) {
      r.problems.push('TELEGRAM_WEBHOOK_URL is set but TELEGRAM_BOT_TOKEN is not (no bot to take updates for)');
    } else if (webhookSecret === null) {
      r.problems.push('TELEGRAM_WEBHOOK_SECRET must be set with TELEGRAM_WEBHOOK_URL (anyone could post updates otherwise)');
    } else if (!WEBHOOK_PATH.test(url.pathname)) {
      r.problems.push(
        'TELEGRAM_WEBHOOK_URL must have a path of letters, digits and / - _ . ~ only, like /telegram/webhook (the router reads other characters as patterns)',
      );
    } else if (servedByServer(url.pathname)) {
      r.problems.push(
        `TELEGRAM_WEBHOOK_URL must have a path of its own, like /telegram/webhook: ${SERVER_ROUTES} are the server's own routes, and Telegram's updates would never reach the bot`,
      );
    } else {
      webhook = { url: url.toString(), path: url.pathname, secret: webhookSecret };
    }
  } else if (webhookSecret !== null) {
    r.problems.push('TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_WEBHOOK_URL is not (set both for webhook mode, neither for polling)');
  }
  // Telegram's own rule for secret_token: 1–256 of A–Z, a–z, 0–9, _ and -.
  if (webhookSecret !== null && !/^[A-Za-z0-9_-]{16,256}$/.test(webhookSecret)) {
    r.problems.push('TELEGRAM_WEBHOOK_SECRET must be 16–256 characters of A–Z, a–z, 0–9, _ and - (as Telegram allows)');
  }

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
