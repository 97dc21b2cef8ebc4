import { withoutPasswords } from '@stickers/shared';

/**
 * What a Bot API call came to, as a value the outbox decides on (exceptions are for bugs only). `too_long`: over 4096 UTF-16
 * units (200 for a callback answer); `thread_gone`: the topic is closed or deleted; `failed` (5xx, timeout, network): may
 * succeed later; `refused` (any other 4xx but 429): will be refused again.
 */
export type TelegramResult<T> =
  | { ok: true; value: T }
  | { ok: false; kind: 'flood'; retryAfterSec: number; description: string }
  | { ok: false; kind: 'migrated'; newChatId: string; description: string }
  | {
      ok: false;
      kind: 'parse' | 'too_long' | 'not_modified' | 'gone' | 'thread_gone' | 'failed' | 'refused' | 'no_bot';
      description: string;
    };

export type TelegramFailure = Exclude<TelegramResult<unknown>, { ok: true }>;

export function noBot(): TelegramFailure {
  return { ok: false, kind: 'no_bot', description: 'TELEGRAM_BOT_TOKEN is not set' };
}

interface TelegramErrorLike {
  response?: { error_code?: number; description?: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } };
  message?: string;
  name?: string;
}

export function classifyTelegramError(err: unknown): TelegramFailure {
  const e = err as TelegramErrorLike;
  const code = e?.response?.error_code;
  // A network error names the request's URL, with TELEGRAM_API_ROOT's password if it has one: never logged or printed.
  const description = withoutPasswords(e?.response?.description ?? e?.message ?? String(err));
  const params = e?.response?.parameters;
  if (code === 429) return { ok: false, kind: 'flood', retryAfterSec: params?.retry_after ?? 5, description };
  if (params?.migrate_to_chat_id !== undefined)
    return { ok: false, kind: 'migrated', newChatId: String(params.migrate_to_chat_id), description };
  const tooLong = /message is too long|MESSAGE_TOO_LONG|text is too long/i;
  if (code === 400 && tooLong.test(description)) return { ok: false, kind: 'too_long', description };
  if (code === 400 && /can't parse entities|BUTTON_DATA_INVALID/i.test(description)) return { ok: false, kind: 'parse', description };
  if (code === 400 && /message is not modified/i.test(description)) return { ok: false, kind: 'not_modified', description };
  if (code === 400 && /message thread not found|TOPIC_CLOSED|TOPIC_DELETED|TOPIC_ID_INVALID/i.test(description))
    return { ok: false, kind: 'thread_gone', description };
  if (code === 400 && /message to edit not found|message can't be edited|message to be replied not found/i.test(description))
    return { ok: false, kind: 'gone', description };
  if (e?.name === 'AbortError' || /aborted/i.test(description))
    return { ok: false, kind: 'failed', description: 'timeout: Telegram did not answer in time' };
  if (code !== undefined && code >= 400 && code < 500) return { ok: false, kind: 'refused', description: `${code}: ${description}` };
  return { ok: false, kind: 'failed', description: code ? `${code}: ${description}` : description };
}
