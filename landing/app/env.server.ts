/**
 * The landing's environment (docs/requirements.md §10.2), checked once; a bad value is one line per problem, at start.
 * The page hands the browser only what it needs: the phone region its checks read (LEADS_PHONE_REGION, through the
 * loader), the studio's Telegram username the error state links (LANDING_TELEGRAM_CONTACT), and the analytics
 * counter's id and goal (`analytics`), which the page's own HTML carries anyway when a counter is configured.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  checkPolicyUrl,
  checkTelegram,
  withoutPasswords,
  CONSENT_POLICY_URL_MAX,
  parseLocale,
  parsePhoneRegion,
  parseRequiredContacts,
  parseTrustProxy,
  type Locale,
  type PhoneRegion,
  type RequiredContacts,
  type TrustProxy,
  errorText,
} from '@stickers/shared';
import { CAPTCHA_PROVIDERS, CAPTCHA_SPECS, isCaptchaProvider, type PageCaptcha } from './captcha/providers';
import type { CaptchaConfig } from './captcha/verify.server';
import type { AnalyticsConfig } from './leads/analytics';

/** Where the spool lives unless LANDING_SPOOL_DIR says otherwise (relative to the landing's working directory). */
export const DEFAULT_SPOOL_DIR = './data/landing-spool';
export const DEFAULT_SPOOL_MAX_AGE_DAYS = 7;
/** The server refuses a replay whose `late.submitted_at` is older than 30 days: keeping entries longer is pointless. */
export const MAX_SPOOL_MAX_AGE_DAYS = 30;
/**
 * Entries set aside in `rejected/` (422, or not an entry) are deleted this many days after they were set aside: they
 * hold personal data, and ops have had the alert. At most 30, like the waiting entries.
 */
export const DEFAULT_SPOOL_REJECTED_DAYS = 14;
export const MAX_SPOOL_REJECTED_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the captcha's verify request may take unless CAPTCHA_TIMEOUT_MS says otherwise, and its bounds. */
export const DEFAULT_CAPTCHA_TIMEOUT_MS = 3000;
const CAPTCHA_TIMEOUT_MIN_MS = 100;
const CAPTCHA_TIMEOUT_MAX_MS = 10_000;
/** A site key as the providers issue them (`0x4AAAAAAA…`, `ysc1_…`, a UUID): it goes into the page as it is. */
const CAPTCHA_SITE_KEY = /^[A-Za-z0-9_.:-]{1,200}$/;

/** The durable spool of requests that did not reach the server's database. */
export interface SpoolConfig {
  /** Absolute path of LANDING_SPOOL_DIR. */
  dir: string;
  /** LANDING_SPOOL_MAX_AGE_DAYS in milliseconds: older entries are dropped. */
  maxAgeMs: number;
  /** LANDING_SPOOL_REJECTED_DAYS in milliseconds: entries set aside in `rejected/` longer ago are deleted. */
  rejectedMaxAgeMs: number;
}

export interface LandingEnv {
  /** Full URL of `POST /leads`; null with LEADS_SECRET also null means "no server configured" (direct mode). */
  leadsEndpoint: string | null;
  leadsSecret: string | null;
  /**
   * The bot that sends fallback and direct messages; null when not configured. `threadId`: LEADS_THREAD_ID, the forum
   * topic of the leads group they go into; null: the chat itself.
   */
  telegram: { token: string; apiRoot: string; chatId: string; threadId?: number | null } | null;
  minFillMs: number;
  /**
   * LEADS_TELEGRAM_LINK_ROOT (`https://t.me`), as the server's: the sent screen shows a "Continue in Telegram" link only
   * when it is `<root>/<bot>?start=<payload>` (the sandbox's stand-in for t.me in development).
   */
  telegramLinkRoot: string;
  /** Key that signs the `startedAt` the page hands the form (derived from LEADS_SECRET, or random per process). */
  signingKey: Buffer;
  signingKeyIsRandom: boolean;
  /** Which hops of X-Forwarded-For are our own proxies (TRUST_PROXY); none by default: the socket address counts. */
  trustProxy: TrustProxy;
  /** NODE_ENV=production: the console route does not exist there. */
  production: boolean;
  /** The spool; null without a server configured (nothing to replay to). */
  spool: SpoolConfig | null;
  /** ADMIN_CHAT_ID: where the spool's alerts go (through the fallback's bot); null: alerts are only logged. */
  adminChatId: string | null;
  /** LANDING_SOURCE: this landing's name (`wedding`), sent as `source.landing` with every lead; null: none. */
  landingSource: string | null;
  /**
   * LEADS_PHONE_REGION (RU by default): the region a phone typed without `+` or `00` is read in, by the action and, handed
   * over by the loader, by the browser; the server's own setting should say the same.
   */
  phoneRegion: PhoneRegion;
  /**
   * LEADS_REQUIRED_CONTACTS (`telegram,phone` by default): which contacts the form asks for, by the action and, handed
   * over by the loader, by the browser; the server's own setting should say the same.
   */
  requiredContacts: RequiredContacts;
  /**
   * LANDING_PRIVACY_URL: the privacy policy; with it the form shows a required consent box linking to it and the action
   * sends `consent` with the lead. Null (the default): no box, no consent sent.
   */
  privacyUrl: string | null;
  /**
   * LANDING_TELEGRAM_CONTACT: the studio's Telegram username (`@stickers_studio`), offered as a link by the error state
   * ("or message us on Telegram"); null (the default): the error state offers no other way.
   */
  telegramContact: string | null;
  /**
   * LANDING_LOCALE (`ru` by default, or `en`): the language of the page, its field errors and the Telegram message
   * the landing sends (app/i18n/); the page's `lang` follows.
   */
  locale: Locale;
  /**
   * LANDING_METRIKA_ID / LANDING_GA4_ID with LANDING_GOAL: the counter on the page and the goal a delivered request
   * reaches on the sent screen; null (the default): no counter, no script from any other host.
   */
  analytics: AnalyticsConfig | null;
  /**
   * CAPTCHA_PROVIDER with CAPTCHA_SITE_KEY and CAPTCHA_SECRET (and CAPTCHA_VERIFY_URL, CAPTCHA_SCRIPT_URL,
   * CAPTCHA_TIMEOUT_MS): the widget on the form and the action's check; null (the default): no captcha.
   */
  captcha: CaptchaConfig | null;
}

/** The widget's part of the captcha's settings, for the page: never the secret. Null without a captcha. */
export function pageCaptcha(env: Pick<LandingEnv, 'captcha'>): PageCaptcha | null {
  const c = env.captcha;
  return c ? { provider: c.provider, siteKey: c.siteKey, scriptUrl: c.scriptUrl } : null;
}

/** A Metrica counter's number. */
const METRIKA_ID = /^[1-9]\d{0,11}$/;
/** A GA4 measurement id. */
const GA4_ID = /^G-[A-Z0-9]{4,16}$/;
/** A goal both Metrica and GA4 take: a letter, then letters, digits or `_`, up to 40 (GA4's limit for event names). */
const GOAL = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

/** LANDING_SOURCE: a short word of letters, digits, `_`, `-` or `.` (it names the landing on cards and in reports). */
const LANDING_SOURCE = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u;

export class LandingConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid landing configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Creates the spool directory (and its `rejected/`) readable by the landing's user only, and checks that it can
 * write there. Null when it can; otherwise the problem, as one line.
 */
export function checkSpoolDir(dir: string): string | null {
  try {
    for (const d of [dir, resolve(dir, 'rejected')]) {
      mkdirSync(d, { recursive: true, mode: 0o700 });
      if (!statSync(d).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      // It holds personal data: nobody but the landing's user reads it, whatever the umask or an earlier mkdir said.
      if ((statSync(d).mode & 0o077) !== 0) chmodSync(d, 0o700);
      accessSync(d, constants.R_OK | constants.W_OK | constants.X_OK);
    }
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? errorText(err);
    return `LANDING_SPOOL_DIR must be a directory the landing can create and write (got "${dir}": ${code})`;
  }
}

/**
 * The environment as values, one line per problem. `checkSpoolDir`: also create and check the spool directory (at
 * start; the unit tests of the parsing leave the disk alone).
 */
export function loadLandingEnv(env: Record<string, string | undefined>, options: { checkSpoolDir?: boolean } = {}): LandingEnv {
  const problems: string[] = [];
  const get = (name: string) => env[name]?.trim() || null;

  const leadsEndpoint = get('LEADS_ENDPOINT');
  const leadsSecret = get('LEADS_SECRET');
  if (leadsEndpoint) {
    try {
      const url = new URL(leadsEndpoint);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      problems.push(`LEADS_ENDPOINT must be the full http(s) URL of POST /leads (got "${withoutPasswords(leadsEndpoint)}")`);
    }
  }
  if (!!leadsEndpoint !== !!leadsSecret)
    problems.push('LEADS_ENDPOINT and LEADS_SECRET must be set together (or both left empty for direct mode)');

  const token = get('TELEGRAM_BOT_TOKEN');
  const chatId = get('LEADS_CHAT_ID');
  const apiRoot = (get('TELEGRAM_API_ROOT') ?? 'https://api.telegram.org').replace(/\/+$/, '');
  if (!!token !== !!chatId) problems.push('TELEGRAM_BOT_TOKEN and LEADS_CHAT_ID must be set together (the fallback needs both)');
  if (token && !/^\d+:[A-Za-z0-9_-]+$/.test(token)) problems.push('TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF…');
  if (chatId && !/^-?\d{1,20}$/.test(chatId) && !/^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(chatId)) {
    problems.push(`LEADS_CHAT_ID must be a numeric chat id like -1001234567890 (got "${chatId}")`);
  }
  try {
    const url = new URL(apiRoot);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    problems.push(`TELEGRAM_API_ROOT must be an http(s) URL (got "${withoutPasswords(apiRoot)}")`);
  }
  const telegramLinkRoot = (get('LEADS_TELEGRAM_LINK_ROOT') ?? 'https://t.me').replace(/\/+$/, '');
  try {
    const url = new URL(telegramLinkRoot);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    problems.push(`LEADS_TELEGRAM_LINK_ROOT must be an http(s) URL like https://t.me (got "${withoutPasswords(telegramLinkRoot)}")`);
  }
  // The forum topic of the leads group, as the server's LEADS_THREAD_ID.
  const threadRaw = get('LEADS_THREAD_ID');
  if (threadRaw && !/^[1-9]\d{0,15}$/.test(threadRaw)) {
    problems.push(`LEADS_THREAD_ID must be a topic id (message_thread_id), a positive whole number like 12 (got "${threadRaw}")`);
  } else if (threadRaw && !chatId) {
    problems.push('LEADS_THREAD_ID is set but LEADS_CHAT_ID is not (a topic of which chat?)');
  }
  const threadId = threadRaw && /^[1-9]\d{0,15}$/.test(threadRaw) ? Number(threadRaw) : null;

  const fill = get('MIN_FILL_MS') ?? '3000';
  if (!/^\d+$/.test(fill) || Number(fill) > 600_000)
    problems.push(`MIN_FILL_MS must be a whole number of milliseconds up to 600000 (got "${fill}")`);
  const port = get('PORT');
  if (port && (!/^\d+$/.test(port) || Number(port) > 65535)) problems.push(`PORT must be a whole number from 0 to 65535 (got "${port}")`);

  const trust = parseTrustProxy(env.TRUST_PROXY);
  if (!trust.ok) problems.push(trust.error);

  const adminChatId = get('ADMIN_CHAT_ID');
  if (adminChatId && !/^-?\d{1,20}$/.test(adminChatId) && !/^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(adminChatId)) {
    problems.push(`ADMIN_CHAT_ID must be a numeric chat id like -1001234567890 (got "${adminChatId}")`);
  }
  const maxAge = get('LANDING_SPOOL_MAX_AGE_DAYS') ?? String(DEFAULT_SPOOL_MAX_AGE_DAYS);
  if (!/^\d+(\.\d+)?$/.test(maxAge) || !(Number(maxAge) > 0) || Number(maxAge) > MAX_SPOOL_MAX_AGE_DAYS) {
    problems.push(`LANDING_SPOOL_MAX_AGE_DAYS must be a positive number of days, up to ${MAX_SPOOL_MAX_AGE_DAYS} (got "${maxAge}")`);
  }
  const rejectedDays = get('LANDING_SPOOL_REJECTED_DAYS') ?? String(DEFAULT_SPOOL_REJECTED_DAYS);
  if (!/^\d+(\.\d+)?$/.test(rejectedDays) || !(Number(rejectedDays) > 0) || Number(rejectedDays) > MAX_SPOOL_REJECTED_DAYS) {
    problems.push(
      `LANDING_SPOOL_REJECTED_DAYS must be a positive number of days, up to ${MAX_SPOOL_REJECTED_DAYS} (got "${rejectedDays}")`,
    );
  }
  const landingSource = get('LANDING_SOURCE');
  if (landingSource && !LANDING_SOURCE.test(landingSource)) {
    problems.push(`LANDING_SOURCE must be a short name of letters, digits, _, - or . (up to 64, e.g. wedding; got "${landingSource}")`);
  }
  const phoneRegion = parsePhoneRegion(env.LEADS_PHONE_REGION);
  if (!phoneRegion.ok) problems.push(phoneRegion.error);
  const requiredContacts = parseRequiredContacts(env.LEADS_REQUIRED_CONTACTS);
  if (!requiredContacts.ok) problems.push(requiredContacts.error);
  const privacyRaw = get('LANDING_PRIVACY_URL');
  const privacyUrl = privacyRaw ? checkPolicyUrl(privacyRaw) : null;
  if (privacyRaw && !privacyUrl) {
    problems.push(
      `LANDING_PRIVACY_URL must be the full http(s) URL of the privacy policy, up to ${CONSENT_POLICY_URL_MAX} characters (got "${privacyRaw}")`,
    );
  }
  // Read as the form reads a username: `@name`, `name`, `t.me/name`, `https://t.me/name`.
  const contactRaw = get('LANDING_TELEGRAM_CONTACT');
  const contact = contactRaw ? checkTelegram(contactRaw) : null;
  if (contactRaw && !contact?.ok) {
    problems.push(
      `LANDING_TELEGRAM_CONTACT must be the studio's Telegram username, like @stickers_studio or https://t.me/stickers_studio (got "${contactRaw}")`,
    );
  }
  const locale = parseLocale('LANDING_LOCALE', env.LANDING_LOCALE);
  if (!locale.ok) problems.push(locale.error);
  const metrikaId = get('LANDING_METRIKA_ID');
  const ga4Id = get('LANDING_GA4_ID');
  const goal = get('LANDING_GOAL');
  if (metrikaId && !METRIKA_ID.test(metrikaId)) {
    problems.push(`LANDING_METRIKA_ID must be the Metrica counter's number, digits only (e.g. 12345678; got "${metrikaId}")`);
  }
  if (ga4Id && !GA4_ID.test(ga4Id)) {
    problems.push(`LANDING_GA4_ID must be a GA4 measurement id like G-AB12CD34EF (got "${ga4Id}")`);
  }
  if (goal && !GOAL.test(goal)) {
    problems.push(`LANDING_GOAL must be a short identifier: a letter, then letters, digits or _, up to 40 (e.g. lead_sent; got "${goal}")`);
  }
  if (goal && !metrikaId && !ga4Id)
    problems.push('LANDING_GOAL is set but neither LANDING_METRIKA_ID nor LANDING_GA4_ID is (a goal of which counter?)');
  if (!goal && (metrikaId || ga4Id)) {
    problems.push(`${metrikaId ? 'LANDING_METRIKA_ID' : 'LANDING_GA4_ID'} is set but LANDING_GOAL is not (set both, or neither)`);
  }
  const captcha = loadCaptcha(get, problems);
  // The spool exists only with a server to replay to; without one there is nothing to create or check.
  const spoolDir = resolve(get('LANDING_SPOOL_DIR') ?? DEFAULT_SPOOL_DIR);
  if (leadsEndpoint && leadsSecret && options.checkSpoolDir) {
    const problem = checkSpoolDir(spoolDir);
    if (problem) problems.push(problem);
  }

  // Without a server and without Telegram a request goes nowhere but stdout: fine on a laptop, a silent loss of
  // every lead (and personal data in the logs) in production.
  const production = env.NODE_ENV?.trim() === 'production';
  if (production && !leadsEndpoint && !leadsSecret && !token && !chatId) {
    problems.push('in production set LEADS_ENDPOINT and LEADS_SECRET, or TELEGRAM_BOT_TOKEN and LEADS_CHAT_ID: requests would go nowhere');
  }

  if (problems.length > 0) throw new LandingConfigError(problems);
  // The form token's key: LEADS_SECRET, else (direct mode) the bot token: a secret that outlives a restart, so a form
  // opened before one still sends; random only with neither (nowhere to send to but stdout).
  const keySecret = leadsSecret || token;
  return {
    leadsEndpoint,
    leadsSecret,
    telegram: token && chatId ? { token, apiRoot, chatId, threadId } : null,
    minFillMs: Number(fill),
    telegramLinkRoot,
    signingKey: keySecret ? createHmac('sha256', keySecret).update('stickers-landing:startedAt').digest() : randomBytes(32),
    signingKeyIsRandom: !keySecret,
    trustProxy: trust.ok ? trust.value : { mode: 'none' },
    production,
    spool:
      leadsEndpoint && leadsSecret
        ? { dir: spoolDir, maxAgeMs: Number(maxAge) * DAY_MS, rejectedMaxAgeMs: Number(rejectedDays) * DAY_MS }
        : null,
    adminChatId,
    landingSource,
    phoneRegion: phoneRegion.ok ? phoneRegion.value : 'RU',
    requiredContacts: requiredContacts.ok ? requiredContacts.value : 'telegram,phone',
    privacyUrl,
    telegramContact: contact?.ok ? contact.value : null,
    locale: locale.ok ? locale.value : 'ru',
    analytics: goal && (metrikaId || ga4Id) ? { metrikaId, ga4Id, goal } : null,
    captcha,
  };
}

/** The captcha's settings, each problem one line in `problems`; null when none is configured (or a problem). */
function loadCaptcha(get: (name: string) => string | null, problems: string[]): CaptchaConfig | null {
  const provider = get('CAPTCHA_PROVIDER');
  const siteKey = get('CAPTCHA_SITE_KEY');
  const secret = get('CAPTCHA_SECRET');
  const verifyUrl = get('CAPTCHA_VERIFY_URL');
  const scriptUrl = get('CAPTCHA_SCRIPT_URL');
  const timeout = get('CAPTCHA_TIMEOUT_MS');
  const before = problems.length;
  if (!provider) {
    const stray = Object.entries({
      CAPTCHA_SITE_KEY: siteKey,
      CAPTCHA_SECRET: secret,
      CAPTCHA_VERIFY_URL: verifyUrl,
      CAPTCHA_SCRIPT_URL: scriptUrl,
      CAPTCHA_TIMEOUT_MS: timeout,
    })
      .filter(([, value]) => value !== null)
      .map(([name]) => name);
    if (stray.length > 0)
      problems.push(
        `${stray.join(', ')} ${stray.length > 1 ? 'are' : 'is'} set but CAPTCHA_PROVIDER is not (set it to ${CAPTCHA_PROVIDERS.join(', ')}, or leave them all empty)`,
      );
    return null;
  }
  if (!isCaptchaProvider(provider)) {
    problems.push(`CAPTCHA_PROVIDER must be one of ${CAPTCHA_PROVIDERS.join(', ')} (got "${provider}")`);
    return null;
  }
  if (!siteKey) problems.push('CAPTCHA_PROVIDER is set but CAPTCHA_SITE_KEY is not (the widget needs the site key)');
  else if (!CAPTCHA_SITE_KEY.test(siteKey))
    problems.push("CAPTCHA_SITE_KEY must be the provider's site key: letters, digits, _ . : - (up to 200)");
  if (!secret) problems.push('CAPTCHA_PROVIDER is set but CAPTCHA_SECRET is not (the check of the token needs the secret key)');
  for (const [name, value] of [
    ['CAPTCHA_VERIFY_URL', verifyUrl],
    ['CAPTCHA_SCRIPT_URL', scriptUrl],
  ] as const) {
    if (value && !isHttpUrl(value)) problems.push(`${name} must be an http(s) URL (got "${value}")`);
  }
  const timeoutMs = timeout ?? String(DEFAULT_CAPTCHA_TIMEOUT_MS);
  if (!/^\d+$/.test(timeoutMs) || Number(timeoutMs) < CAPTCHA_TIMEOUT_MIN_MS || Number(timeoutMs) > CAPTCHA_TIMEOUT_MAX_MS) {
    problems.push(
      `CAPTCHA_TIMEOUT_MS must be a whole number of milliseconds from ${CAPTCHA_TIMEOUT_MIN_MS} to ${CAPTCHA_TIMEOUT_MAX_MS} (got "${timeoutMs}")`,
    );
  }
  if (problems.length > before || !siteKey || !secret) return null;
  const spec = CAPTCHA_SPECS[provider];
  return {
    provider,
    siteKey,
    secret,
    verifyUrl: verifyUrl ?? spec.verifyUrl,
    scriptUrl: scriptUrl ?? spec.scriptUrl,
    timeoutMs: Number(timeoutMs),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

let cached: LandingEnv | null = null;

/** The environment, loaded on first use (at start in production: entry.server imports it). */
export function getEnv(): LandingEnv {
  cached ??= loadLandingEnv(process.env, { checkSpoolDir: true });
  return cached;
}

/** Tests change process.env between cases. */
export function resetEnv(): void {
  cached = null;
}
