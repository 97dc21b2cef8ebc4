/**
 * The landing's environment (CONTRACT section 2), checked once; a bad value is one line per problem, at start.
 * Only names the browser may see would ever be handed to it, and it needs none.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { parseTrustProxy, type TrustProxy } from '@stickers/shared';

export interface LandingEnv {
  /** Full URL of `POST /leads`; null with LEADS_SECRET also null means "no server configured" (direct mode). */
  leadsEndpoint: string | null;
  leadsSecret: string | null;
  /** The bot that sends fallback and direct messages; null when not configured. */
  telegram: { token: string; apiRoot: string; chatId: string } | null;
  minFillMs: number;
  /** Key that signs the `startedAt` the page hands the form (derived from LEADS_SECRET, or random per process). */
  signingKey: Buffer;
  signingKeyIsRandom: boolean;
  /** Which hops of X-Forwarded-For are our own proxies (TRUST_PROXY); none by default: the socket address counts. */
  trustProxy: TrustProxy;
  /** NODE_ENV=production: the console route does not exist there. */
  production: boolean;
}

export class LandingConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid landing configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadLandingEnv(env: Record<string, string | undefined>): LandingEnv {
  const problems: string[] = [];
  const get = (name: string) => env[name]?.trim() || null;

  const leadsEndpoint = get('LEADS_ENDPOINT');
  const leadsSecret = get('LEADS_SECRET');
  if (leadsEndpoint) {
    try {
      const url = new URL(leadsEndpoint);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      problems.push(`LEADS_ENDPOINT must be the full http(s) URL of POST /leads (got "${leadsEndpoint}")`);
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
    problems.push(`TELEGRAM_API_ROOT must be an http(s) URL (got "${apiRoot}")`);
  }

  const fill = get('MIN_FILL_MS') ?? '3000';
  if (!/^\d+$/.test(fill) || Number(fill) > 600_000)
    problems.push(`MIN_FILL_MS must be a whole number of milliseconds up to 600000 (got "${fill}")`);
  const port = get('PORT');
  if (port && (!/^\d+$/.test(port) || Number(port) > 65535)) problems.push(`PORT must be a whole number from 0 to 65535 (got "${port}")`);

  const trust = parseTrustProxy(env.TRUST_PROXY);
  if (!trust.ok) problems.push(trust.error);

  // Without a server and without Telegram a request goes nowhere but stdout: fine on a laptop, a silent loss of
  // every lead (and personal data in the logs) in production.
  const production = env.NODE_ENV?.trim() === 'production';
  if (production && !leadsEndpoint && !leadsSecret && !token && !chatId) {
    problems.push('in production set LEADS_ENDPOINT and LEADS_SECRET, or TELEGRAM_BOT_TOKEN and LEADS_CHAT_ID: requests would go nowhere');
  }

  if (problems.length > 0) throw new LandingConfigError(problems);
  return {
    leadsEndpoint,
    leadsSecret,
    telegram: token && chatId ? { token, apiRoot, chatId } : null,
    minFillMs: Number(fill),
    signingKey: leadsSecret ? createHmac('sha256', leadsSecret).update('stickers-landing:startedAt').digest() : randomBytes(32),
    signingKeyIsRandom: !leadsSecret,
    trustProxy: trust.ok ? trust.value : { mode: 'none' },
    production,
  };
}

let cached: LandingEnv | null = null;

/** The environment, loaded on first use (at start in production: entry.server imports it). */
export function getEnv(): LandingEnv {
  cached ??= loadLandingEnv(process.env);
  return cached;
}

/** Tests change process.env between cases. */
export function resetEnv(): void {
  cached = null;
}
