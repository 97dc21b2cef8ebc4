import { CHAT_ID, httpUrl, THREAD_ID, type EnvReader } from './env-reader';

/** TELEGRAM_BOT_TOKEN's form, checked before its URL goes out to Telegram; the line never quotes it. */
export function botTokenProblem(token: string): string | null {
  return /^\d+:[A-Za-z0-9_-]+$/.test(token) ? null : 'TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (as BotFather gives it)';
}

export function readApiRoot(r: EnvReader): string {
  return r.valid('TELEGRAM_API_ROOT', 'https://api.telegram.org', 'an http(s) URL', (v) => httpUrl(v) && v);
}

/** LANDING_SOURCE's rule: a landing's name, in LEADS_ROUTES and the inbox's `source` filter (`none` among them). */
export const SOURCE_NAME = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u;

/** One entry of LEADS_ROUTES: the leads of `source` (their `source_landing`) get their cards in this chat and topic. */
export interface LeadsRoute {
  source: string;
  chatId: string;
  threadId: number | null;
}

/** LEADS_ROUTES=wedding=-1001111111111:12,corporate=-1002222222222: each source once (without case). */
export function readRoutes(r: EnvReader): LeadsRoute[] {
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
    if (!m || !SOURCE_NAME.test(source)) {
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

/** A path the router takes literally: no `:`, `*`, brackets or other pattern characters (percent escapes allowed). */
const WEBHOOK_PATH = /^\/(?:[A-Za-z0-9/._~-]|%[0-9A-Fa-f]{2})*$/;

/** Whether another route of this server answers `path` as Express matches it: the webhook there would never see an update. */
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

/** TELEGRAM_WEBHOOK_URL with TELEGRAM_WEBHOOK_SECRET, both or neither; null: long polling. */
export function readTelegramWebhook(r: EnvReader, token: string | null): { url: string; path: string; secret: string } | null {
  const webhookUrl = r.string('TELEGRAM_WEBHOOK_URL') || null;
  const webhookSecret = r.string('TELEGRAM_WEBHOOK_SECRET') || null;
  let webhook: ReturnType<typeof readTelegramWebhook> = null;
  if (webhookUrl !== null) {
    const url = httpUrl(webhookUrl);
    if (!url) {
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
        `TELEGRAM_WEBHOOK_URL must have a path of its own, like /telegram/webhook: /leads (and every path under it), /health, /ready, /metrics and /openapi.json are the server's own routes, and Telegram's updates would never reach the bot`,
      );
    } else {
      webhook = { url: url.toString(), path: url.pathname, secret: webhookSecret };
    }
  } else if (webhookSecret !== null) {
    r.problems.push('TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_WEBHOOK_URL is not (set both for webhook mode, neither for polling)');
  }
  if (webhookSecret !== null && !/^[A-Za-z0-9_-]{16,256}$/.test(webhookSecret)) {
    r.problems.push('TELEGRAM_WEBHOOK_SECRET must be 16–256 characters of A–Z, a–z, 0–9, _ and - (as Telegram allows)');
  }
  return webhook;
}
