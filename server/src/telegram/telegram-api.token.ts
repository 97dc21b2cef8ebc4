import type { Telegram } from 'telegraf';

/**
 * The Bot API client (telegraf's `Telegram`) pointed at TELEGRAM_API_ROOT, or null without TELEGRAM_BOT_TOKEN:
 * then leads are still stored and publishing waits (CONTRACT section 2).
 */
export const TELEGRAM_API = Symbol('TelegramApi');
export type TelegramApi = Telegram | null;

/** Telegraf drops a path prefix of apiRoot unless it ends with "/" (STACK.md): every telegraf client uses this. */
export function telegrafApiRoot(apiRoot: string): string {
  return apiRoot.endsWith('/') ? apiRoot : `${apiRoot}/`;
}
