import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectBot } from 'nestjs-telegraf';
import { Telegraf, type Telegram } from 'telegraf';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { InlineKeyboard } from '../cards/card.renderer';
import { telegrafApiRoot } from './telegraf';

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
  /**
   * Issue 14: the forum topic (`message_thread_id`) is closed or deleted, or was never there ("message thread not
   * found", "TOPIC_CLOSED"); the same message without a topic goes into the chat's General topic.
   */
  | { ok: false; kind: 'thread_gone'; description: string }
  /** A 5xx, a timeout, a network error: Telegram may take the same call later. */
  | { ok: false; kind: 'failed'; description: string }
  /** Any other 4xx (not 429): Telegram will refuse the same call again (a chat the bot is not in, a bad id). */
  | { ok: false; kind: 'refused'; description: string }
  | { ok: false; kind: 'no_bot'; description: string };

export type TelegramFailure = Exclude<TelegramResult<unknown>, { ok: true }>;

const STOP_REPEAT_MS = 20;

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
  if (code === 400 && /message thread not found|TOPIC_CLOSED|TOPIC_DELETED|TOPIC_ID_INVALID/i.test(description))
    return { ok: false, kind: 'thread_gone', description };
  if (code === 400 && /message to edit not found|message can't be edited|message to be replied not found/i.test(description))
    return { ok: false, kind: 'gone', description };
  if (e?.name === 'AbortError' || /aborted/i.test(description))
    return { ok: false, kind: 'failed', description: 'timeout: Telegram did not answer in time' };
  if (code !== undefined && code >= 400 && code < 500) return { ok: false, kind: 'refused', description: `${code}: ${description}` };
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
  /**
   * Issue 14: the forum topic to post in (`message_thread_id`); absent or null: the chat itself (a forum's General
   * topic). A reply without one lands in the topic of the message it replies to, as Telegram does.
   */
  threadId?: number | null;
  text: string;
  html: boolean;
  keyboard?: InlineKeyboard;
  replyTo?: number;
  /**
   * Only as a reply: when the message replied to is gone, Telegram refuses ("message to be replied not found", kind
   * `gone`) instead of sending it on its own. For a reply that means nothing without its message.
   */
  replyOnly?: boolean;
}

/** The update kinds the bot asks getUpdates for. */
export type UpdateKind = 'message' | 'callback_query';

export interface BotCommandEntry {
  command: string;
  description: string;
}

type BotInfo = NonNullable<Telegraf['botInfo']>;

/** The bot itself, as getMe gives it. */
export interface BotIdentity {
  id: number;
  first_name: string;
  username?: string;
  /** False while BotFather's privacy mode is on: in groups the bot then sees commands, replies to it and its buttons. */
  can_read_all_group_messages?: boolean;
}

/** A chat as getChat gives it: the fields the CLI's setup and doctor read. */
export interface ChatInfo {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  is_forum?: boolean;
  /** What members may do by default (`can_send_messages`…). */
  permissions?: Record<string, boolean | undefined>;
}

/** A ChatMember: its status and the rights (administrator) or permissions (restricted) that go with it. */
export interface ChatMemberInfo {
  status: string;
  [right: string]: unknown;
}

/** getWebhookInfo's answer: an empty url when no webhook is set. */
export interface WebhookInfo {
  url: string;
  pending_update_count: number;
  last_error_date?: number;
  last_error_message?: string;
}

/** An update as getUpdates gives it; whoever asked for it reads its payload (`message`, `my_chat_member`…). */
export interface RawUpdate {
  update_id: number;
  [kind: string]: unknown;
}

function isNotRunning(err: unknown): boolean {
  return err instanceof Error && err.message === 'Bot is not running!';
}

/**
 * Every Bot API call of the app, each with a timeout so a hanging Telegram cannot stall a tick, a request or an alert.
 * It wraps the one telegraf bot nestjs-telegraf creates (none without TELEGRAM_BOT_TOKEN: then `available` is false,
 * leads are stored and publishing and alerts wait, docs/requirements.md §10.1), and starts and stops its long polling.
 */
@Injectable()
export class TelegramGateway {
  private readonly logger = new Logger('Telegram');
  private readonly telegram: Telegram | null;
  /** telegraf's own stop(), which throws "Bot is not running!" when nothing polls. */
  private readonly stopBot: ((reason?: string) => void) | null = null;
  /** The launch() in progress: it settles only when polling ends. */
  private launched: Promise<void> | null = null;
  private stopRequested = false;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: Pick<ServerConfig, 'telegramTimeoutMs'>,
    @Optional() @InjectBot() private readonly bot?: Telegraf,
  ) {
    this.telegram = bot?.telegram ?? null;
    if (!bot) {
      this.logger.warn('TELEGRAM_BOT_TOKEN is not set: leads are stored, publishing and alerts are paused');
      return;
    }
    // nestjs-telegraf stops the bot at shutdown, and telegraf throws when it never polled (BOT_POLLING off, a
    // launch that failed): that must not fail the app's close.
    const stop = bot.stop.bind(bot);
    this.stopBot = stop;
    bot.stop = (reason?: string) => {
      this.stopRequested = true;
      try {
        stop(reason);
      } catch (err) {
        if (!isNotRunning(err)) throw err;
      }
    };
  }

  /**
   * A gateway of its own, outside the app, for the CLI (`setup`, `doctor`): the same calls, timeouts and classified
   * answers, on a telegraf client of that token that never polls by itself.
   */
  static forToken(token: string, apiRoot: string, timeoutMs: number): TelegramGateway {
    return new TelegramGateway({ telegramTimeoutMs: timeoutMs }, new Telegraf(token, { telegram: { apiRoot: telegrafApiRoot(apiRoot) } }));
  }

  get available(): boolean {
    return this.telegram !== null;
  }

  /** The telegraf client every call goes through: the bot's own (tests check that the app has only this one). */
  get client(): Telegram | null {
    return this.telegram;
  }

  /** `limits`: a longer bound than TELEGRAM_TIMEOUT_MS (a long poll), and the caller's own signal to give up early. */
  private async call<T>(
    method: string,
    payload: Record<string, unknown>,
    limits: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TelegramResult<T>> {
    if (!this.telegram) return { ok: false, kind: 'no_bot', description: 'TELEGRAM_BOT_TOKEN is not set' };
    const timeout = AbortSignal.timeout(limits.timeoutMs ?? this.config.telegramTimeoutMs);
    const signal = limits.signal ? AbortSignal.any([timeout, limits.signal]) : timeout;
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
      ...(message.threadId ? { message_thread_id: message.threadId } : {}),
      text: message.text,
      ...(message.html ? { parse_mode: 'HTML' } : {}),
      ...(message.keyboard ? { reply_markup: message.keyboard } : {}),
      ...(message.replyTo
        ? { reply_parameters: { message_id: message.replyTo, allow_sending_without_reply: message.replyOnly !== true } }
        : {}),
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

  /**
   * Issue 14: a file as a document (multipart: telegraf uploads a `{ source: Buffer, filename }`), with a short caption.
   * Plain values only beside the file: every field of a multipart call goes as a string.
   */
  async sendDocument(d: {
    chatId: string;
    /** Issue 14: the forum topic, as for `send`. */
    threadId?: number | null;
    filename: string;
    content: Buffer;
    caption?: string;
  }): Promise<TelegramResult<{ message_id: number }>> {
    return this.call('sendDocument', {
      chat_id: d.chatId,
      ...(d.threadId ? { message_thread_id: String(d.threadId) } : {}),
      document: { source: d.content, filename: d.filename },
      ...(d.caption ? { caption: d.caption } : {}),
    });
  }

  /** Telegram refuses a longer answer outright and the presser sees nothing: cut it instead. */
  async answerCallback(id: string, text: string): Promise<TelegramResult<unknown>> {
    return this.call('answerCallbackQuery', { callback_query_id: id, text: cutTo(text, CALLBACK_ANSWER_MAX) });
  }

  /** A user's status in a chat ('creator', 'administrator', 'member', 'restricted', 'left', 'kicked'), with its rights. */
  async getChatMember(chatId: string, userId: number): Promise<TelegramResult<ChatMemberInfo>> {
    return this.call('getChatMember', { chat_id: chatId, user_id: userId });
  }

  async getMe(): Promise<TelegramResult<BotIdentity>> {
    return this.call('getMe', {});
  }

  /** The chat as the bot sees it: refused ("chat not found", 403) when the bot is not in it. */
  async getChat(chatId: string): Promise<TelegramResult<ChatInfo>> {
    return this.call('getChat', { chat_id: chatId });
  }

  /**
   * "typing…" in a chat, in a topic when given: the CLI's doctor reaches a topic this way without posting in it
   * (Telegram refuses an unknown or closed topic as it refuses a message).
   */
  async sendChatAction(chatId: string, threadId: number | null): Promise<TelegramResult<unknown>> {
    return this.call('sendChatAction', { chat_id: chatId, action: 'typing', ...(threadId ? { message_thread_id: threadId } : {}) });
  }

  async getWebhookInfo(): Promise<TelegramResult<WebhookInfo>> {
    return this.call('getWebhookInfo', {});
  }

  /** Removes the webhook; updates that wait are kept (getUpdates then gets them). */
  async deleteWebhook(): Promise<TelegramResult<unknown>> {
    return this.call('deleteWebhook', { drop_pending_updates: false });
  }

  /**
   * One getUpdates call of the CLI's setup (the server polls through `poll`): waits up to `timeoutSec` for updates from
   * `offset` on, which also confirms every update before it (Telegram never sends those again). Bounded by the poll's
   * length plus TELEGRAM_TIMEOUT_MS, and by `signal` (the caller stops waiting).
   */
  async getUpdates(
    q: { offset?: number; timeoutSec: number; allowedUpdates?: readonly string[]; limit?: number },
    signal?: AbortSignal,
  ): Promise<TelegramResult<RawUpdate[]>> {
    return this.call(
      'getUpdates',
      {
        ...(q.offset !== undefined ? { offset: q.offset } : {}),
        timeout: q.timeoutSec,
        ...(q.limit !== undefined ? { limit: q.limit } : {}),
        ...(q.allowedUpdates ? { allowed_updates: [...q.allowedUpdates] } : {}),
      },
      { timeoutMs: q.timeoutSec * 1000 + this.config.telegramTimeoutMs, signal },
    );
  }

  async setMyCommands(commands: readonly BotCommandEntry[]): Promise<TelegramResult<unknown>> {
    return this.call('setMyCommands', { commands });
  }

  /** Where a failing update handler is reported (telegraf's default sets a failure exit code and rethrows). */
  onUpdateError(handler: (err: unknown) => void): void {
    this.bot?.catch((err) => handler(err));
  }

  /**
   * One run of long polling through telegraf's launch(). getMe goes first through `call` (the timeout; launch() then
   * skips its own, and updates know the bot's name); `onLaunched` runs once it has answered, as launch() goes on to
   * deleteWebhook and getUpdates. Resolves when polling ends: ok when it was stopped (`stopPolling`, or nestjs-telegraf
   * at shutdown), else why it failed (getMe, deleteWebhook, or a getUpdates answer telegraf does not retry itself:
   * 409 another instance polls, 401). Retrying is the caller's business.
   */
  async poll(updates: readonly UpdateKind[], onLaunched: (username: string) => void): Promise<TelegramResult<void>> {
    const bot = this.bot;
    if (!bot) return { ok: false, kind: 'no_bot', description: 'TELEGRAM_BOT_TOKEN is not set' };
    if (this.launched) throw new Error('already polling');
    if (!bot.botInfo) {
      const me = await this.call<BotInfo>('getMe', {});
      if (!me.ok) return me;
      bot.botInfo = me.value;
    }
    const { username } = bot.botInfo;
    if (this.stopRequested) return { ok: true, value: undefined };
    const launched = bot.launch({ allowedUpdates: [...updates], dropPendingUpdates: false }, () => onLaunched(username));
    this.launched = launched;
    try {
      await launched;
      return { ok: true, value: undefined };
    } catch (err) {
      return classifyTelegramError(err);
    } finally {
      this.launched = null;
    }
  }

  /**
   * Ends polling for good. launch() cannot be cancelled, and stop() reaches only the poller that exists: while
   * launch() still waits for deleteWebhook, stop() refuses ("Bot is not running!") or stops the previous, finished
   * poller. So stop() is repeated until that launch() has ended, and no bot polls after the app closed.
   */
  stopPolling(): void {
    this.stopRequested = true;
    this.endLaunch();
  }

  /**
   * Ends the current run of polling only (issue 13: another instance polls now); `poll()` may start again later.
   * The run's promise resolves ok, as for a stop.
   */
  pausePolling(): void {
    this.endLaunch();
  }

  private endLaunch(): void {
    const launched = this.launched;
    if (!launched || !this.stopBot) return;
    const stop = this.stopBot;
    const again = () => {
      if (this.launched !== launched) return;
      try {
        stop('shutdown');
      } catch (err) {
        if (!isNotRunning(err)) this.logger.error(`stopping the bot failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      setTimeout(again, STOP_REPEAT_MS).unref();
    };
    again();
  }

  /**
   * Webhook mode (issue 13): Telegram posts every update of `updates` to `url`, with `secret` in the
   * X-Telegram-Bot-Api-Secret-Token header. Updates that waited meanwhile are kept (a restart loses no press).
   */
  async setWebhook(url: string, secret: string, updates: readonly UpdateKind[]): Promise<TelegramResult<unknown>> {
    return this.call('setWebhook', { url, secret_token: secret, allowed_updates: [...updates], drop_pending_updates: false });
  }

  /** One update that came by webhook, through the same handlers polling feeds (errors go to `onUpdateError`). */
  async handleUpdate(update: unknown): Promise<void> {
    if (!this.bot) return;
    await this.bot.handleUpdate(update as Parameters<Telegraf['handleUpdate']>[0]);
  }
}
