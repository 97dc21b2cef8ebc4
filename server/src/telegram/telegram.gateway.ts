import { Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { InlineKeyboard } from '../cards/card.renderer';
import { TELEGRAM_API, type TelegramApi } from './telegram-api.token';

/**
 * What a Bot API call came to, as a value: the outbox decides on it (retry schedule, flood control, migration,
 * plain-text fallback). Exceptions are for bugs only.
 */
export type TelegramResult<T> =
  | { ok: true; value: T }
  | { ok: false; kind: 'flood'; retryAfterSec: number; description: string }
  | { ok: false; kind: 'migrated'; newChatId: string; description: string }
  | { ok: false; kind: 'parse'; description: string }
  /** The text is over Telegram's limit (4096 UTF-16 code units after entity parsing; 200 for a callback answer). */
  | { ok: false; kind: 'too_long'; description: string }
  | { ok: false; kind: 'not_modified'; description: string }
  | { ok: false; kind: 'gone'; description: string }
  | { ok: false; kind: 'failed'; description: string }
  | { ok: false; kind: 'no_bot'; description: string };

export type TelegramFailure = Exclude<TelegramResult<unknown>, { ok: true }>;

interface TelegramErrorLike {
  response?: { error_code?: number; description?: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } };
  message?: string;
  name?: string;
}

/** Reads a telegraf error (or a network error, or our timeout) into a TelegramResult. */
export function classifyTelegramError(err: unknown): TelegramFailure {
  const e = err as TelegramErrorLike;
  const code = e?.response?.error_code;
  const description = e?.response?.description ?? e?.message ?? String(err);
  const params = e?.response?.parameters;
  if (code === 429) return { ok: false, kind: 'flood', retryAfterSec: params?.retry_after ?? 5, description };
  if (params?.migrate_to_chat_id !== undefined)
    return { ok: false, kind: 'migrated', newChatId: String(params.migrate_to_chat_id), description };
  const tooLong = /message is too long|MESSAGE_TOO_LONG|text is too long/i;
  if (code === 400 && tooLong.test(description)) return { ok: false, kind: 'too_long', description };
  if (code === 400 && /can't parse entities|BUTTON_DATA_INVALID/i.test(description)) return { ok: false, kind: 'parse', description };
  if (code === 400 && /message is not modified/i.test(description)) return { ok: false, kind: 'not_modified', description };
  if (code === 400 && /message to edit not found|message can't be edited/i.test(description))
    return { ok: false, kind: 'gone', description };
  if (e?.name === 'AbortError' || /aborted/i.test(description))
    return { ok: false, kind: 'failed', description: 'timeout: Telegram did not answer in time' };
  return { ok: false, kind: 'failed', description: code ? `${code}: ${description}` : description };
}

/** Telegram's limit on a callback answer, in UTF-16 code units (what `String.length` counts). */
export const CALLBACK_ANSWER_MAX = 200;

/** At most `max` UTF-16 code units, ending with "…" when cut, never splitting a surrogate pair. */
export function cutTo(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1;
  return `${text.slice(0, end)}…`;
}

export interface OutgoingMessage {
  chatId: string;
  text: string;
  html: boolean;
  keyboard?: InlineKeyboard;
  replyTo?: number;
}

/** The Bot API calls the outbox and the bot make, each with a timeout so a hanging Telegram cannot stall a tick. */
@Injectable()
export class TelegramGateway {
  constructor(
    @Inject(TELEGRAM_API) private readonly telegram: TelegramApi,
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
  ) {}

  get available(): boolean {
    return this.telegram !== null;
  }

  private async call<T>(method: string, payload: Record<string, unknown>): Promise<TelegramResult<T>> {
    if (!this.telegram) return { ok: false, kind: 'no_bot', description: 'TELEGRAM_BOT_TOKEN is not set' };
    const signal = AbortSignal.timeout(this.config.telegramTimeoutMs);
    try {
      const value = (await this.telegram.callApi(method as 'sendMessage', payload as never, { signal: signal as never })) as T;
      return { ok: true, value };
    } catch (err) {
      return classifyTelegramError(err);
    }
  }

  async send(message: OutgoingMessage): Promise<TelegramResult<{ message_id: number }>> {
    return this.call('sendMessage', {
      chat_id: message.chatId,
      text: message.text,
      ...(message.html ? { parse_mode: 'HTML' } : {}),
      ...(message.keyboard ? { reply_markup: message.keyboard } : {}),
      ...(message.replyTo ? { reply_parameters: { message_id: message.replyTo, allow_sending_without_reply: true } } : {}),
      link_preview_options: { is_disabled: true },
    });
  }

  async edit(chatId: string, messageId: number, text: string, html: boolean, keyboard: InlineKeyboard): Promise<TelegramResult<unknown>> {
    return this.call('editMessageText', {
      chat_id: chatId,
      message_id: messageId,
      text,
      ...(html ? { parse_mode: 'HTML' } : {}),
      reply_markup: keyboard,
      link_preview_options: { is_disabled: true },
    });
  }

  /** Telegram refuses a longer answer outright and the presser sees nothing: cut it instead. */
  async answerCallback(id: string, text: string): Promise<TelegramResult<unknown>> {
    return this.call('answerCallbackQuery', { callback_query_id: id, text: cutTo(text, CALLBACK_ANSWER_MAX) });
  }

  /** A user's status in a chat ('creator', 'administrator', 'member', 'restricted', 'left', 'kicked'). */
  async getChatMember(chatId: string, userId: number): Promise<TelegramResult<{ status: string }>> {
    return this.call('getChatMember', { chat_id: chatId, user_id: userId });
  }

  async getMe(): Promise<TelegramResult<{ username?: string }>> {
    return this.call('getMe', {});
  }
}
