import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectBot } from 'nestjs-telegraf';
import { type Context, Telegraf } from 'telegraf';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { classifyTelegramError, noBot, type TelegramResult } from './telegram-result';
import type { ApiMethods, InlineKeyboardMarkup as InlineKeyboard, Opts, Ret, UserFromGetMe as BotIdentity } from '@telegraf/types';

/** What a bot update handler receives, named here so that telegraf stays in this folder. */
export type BotContext = Context;

/** Telegraf drops a path prefix of apiRoot unless it ends with "/": every telegraf client uses this. */
export function telegrafApiRoot(apiRoot: string): string {
  return apiRoot.endsWith('/') ? apiRoot : `${apiRoot}/`;
}

/** Telegram refuses a message whose text, after entity parsing, is longer than this many UTF-16 code units. */
export const TELEGRAM_TEXT_MAX = 4096;

/** Telegram's limit on a callback answer, in UTF-16 code units (what `String.length` counts). */
const CALLBACK_ANSWER_MAX = 200;

/** At most `max` UTF-16 code units, ending with "…" when cut, never splitting a surrogate pair. */
export function cutTo(text: string, max: number, mark = '…'): string {
  if (text.length <= max) return text;
  let end = max - mark.length;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1;
  return `${text.slice(0, end)}${mark}`;
}

/** Buttons under a message: callback data, links, or (private chats only) a Mini App's `web_app`. */
export type { InlineKeyboard, BotIdentity };

export interface OutgoingMessage {
  chatId: string;
  /** The forum topic (null: General); a reply without one lands in the topic of the message it replies to. */
  threadId?: number | null;
  text: string;
  html: boolean;
  keyboard?: InlineKeyboard;
  replyTo?: number;
  /** Only as a reply: when the message replied to is gone, Telegram refuses (kind `gone`) instead of sending it alone. */
  replyOnly?: boolean;
}

/** What the bot answers a command or a message with: a text, with buttons or none. */
export type BotReply = Pick<OutgoingMessage, 'text' | 'keyboard'>;

/** The updates the bot asks for, by webhook or by polling. */
export const BOT_UPDATES = ['message', 'callback_query'] as const;

/** A chat as getChat gives it: the fields the CLI's setup and doctor read. */
export interface ChatInfo {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  is_forum?: boolean;
  permissions?: Record<string, boolean | undefined>;
}

/** A ChatMember: its status, and its rights (administrator) or permissions (restricted). */
export interface ChatMemberInfo {
  status: string;
  [right: string]: unknown;
}

/** An update as getUpdates gives it; whoever asked for it reads its payload (`message`, `my_chat_member`…). */
export interface RawUpdate {
  update_id: number;
  [kind: string]: unknown;
}

/** Every Bot API call of the app, each with a timeout, through nestjs-telegraf's one bot (none without a token: §10.1). */
@Injectable()
export class TelegramGateway {
  private readonly logger = new Logger('Telegram');
  /** identity()'s getMe, while it is not answered yet. */
  private asking: Promise<TelegramResult<BotIdentity>> | null = null;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: Pick<ServerConfig, 'telegramTimeoutMs'>,
    @Optional() @InjectBot() private readonly bot?: Telegraf,
  ) {
    if (!bot) this.logger.warn('TELEGRAM_BOT_TOKEN is not set: leads are stored, publishing and alerts are paused');
  }

  /** For the CLI (`setup`, `doctor`): the same calls on a telegraf client of that token that never polls by itself. */
  static forToken(token: string, apiRoot: string, timeoutMs: number): TelegramGateway {
    return new TelegramGateway({ telegramTimeoutMs: timeoutMs }, new Telegraf(token, { telegram: { apiRoot: telegrafApiRoot(apiRoot) } }));
  }

  get available(): boolean {
    return this.bot !== undefined;
  }

  /** Any Bot API method but uploads, typed by telegraf's own method types. */
  call<M extends keyof ApiMethods<never>>(method: M, payload: Opts<never>[M]): Promise<TelegramResult<Ret<never>[M]>> {
    return this.request(method, payload);
  }

  /** `limits`: a longer bound than TELEGRAM_TIMEOUT_MS (a long poll), and the caller's signal to give up early. */
  private async request<T>(
    method: string,
    payload: object,
    limits: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TelegramResult<T>> {
    if (!this.bot) return noBot();
    const timeout = AbortSignal.timeout(limits.timeoutMs ?? this.config.telegramTimeoutMs);
    const signal = limits.signal ? AbortSignal.any([timeout, limits.signal]) : timeout;
    try {
      const value = (await this.bot.telegram.callApi(method as 'sendMessage', payload as never, { signal: signal as never })) as T;
      return { ok: true, value };
    } catch (err) {
      return classifyTelegramError(err);
    }
  }

  // The payloads below leave a field undefined for "none": telegraf sends no field whose value is undefined or null.
  async send(message: OutgoingMessage): Promise<TelegramResult<{ message_id: number }>> {
    return this.request('sendMessage', {
      chat_id: message.chatId,
      message_thread_id: message.threadId || undefined,
      text: message.text,
      parse_mode: message.html ? 'HTML' : undefined,
      reply_markup: message.keyboard,
      reply_parameters: message.replyTo
        ? { message_id: message.replyTo, allow_sending_without_reply: message.replyOnly !== true }
        : undefined,
      link_preview_options: { is_disabled: true },
    });
  }

  async edit(chatId: string, messageId: number, text: string, html: boolean, keyboard: InlineKeyboard): Promise<TelegramResult<unknown>> {
    return this.request('editMessageText', {
      chat_id: chatId,
      message_id: messageId,
      text,
      parse_mode: html ? 'HTML' : undefined,
      reply_markup: keyboard,
      link_preview_options: { is_disabled: true },
    });
  }

  /** A copy without a "forwarded from" header; `caption` replaces a media message's (Telegram refuses it for a text). */
  async copyMessage(c: {
    chatId: string;
    fromChatId: string;
    messageId: number;
    threadId?: number | null;
    replyTo?: number;
    caption?: string;
  }): Promise<TelegramResult<{ message_id: number }>> {
    return this.request('copyMessage', {
      chat_id: c.chatId,
      from_chat_id: c.fromChatId,
      message_id: c.messageId,
      message_thread_id: c.threadId || undefined,
      caption: c.caption,
      reply_parameters: c.replyTo ? { message_id: c.replyTo, allow_sending_without_reply: true } : undefined,
    });
  }

  /** Multipart: telegraf uploads `{ source, filename }`; every other field goes as a string. A photo's caption is ≤ 1024. */
  sendFile(
    kind: 'document' | 'photo',
    u: Pick<OutgoingMessage, 'chatId' | 'threadId'> & { filename: string; content: Buffer; caption?: string },
  ): Promise<TelegramResult<{ message_id: number }>> {
    return this.request(kind === 'photo' ? 'sendPhoto' : 'sendDocument', {
      chat_id: u.chatId,
      message_thread_id: u.threadId ? String(u.threadId) : undefined,
      [kind]: { source: u.content, filename: u.filename },
      caption: u.caption || undefined,
    });
  }

  /** An answer in a topic that closed (an administrator may still write there) or went: into the General topic, on its own. */
  async inTopic<T>(threadId: number | null, send: (threadId: number | null) => Promise<TelegramResult<T>>): Promise<TelegramResult<T>> {
    const sent = await send(threadId);
    return !sent.ok && sent.kind === 'thread_gone' && threadId !== null ? send(null) : sent;
  }

  /** Telegram refuses a longer answer outright and the presser sees nothing: cut it instead. */
  readonly answerCallback = (id: string, text: string): Promise<TelegramResult<unknown>> =>
    this.request('answerCallbackQuery', { callback_query_id: id, text: cutTo(text, CALLBACK_ANSWER_MAX) });

  readonly getChatMember = (chatId: string, userId: number): Promise<TelegramResult<ChatMemberInfo>> =>
    this.request('getChatMember', { chat_id: chatId, user_id: userId });

  /** getMe, asked once for the app and kept as telegraf's `botInfo` (a failed one is asked again next time). */
  identity(): Promise<TelegramResult<BotIdentity>> {
    const known = this.bot?.botInfo;
    if (known) return Promise.resolve({ ok: true, value: known });
    this.asking ??= this.call('getMe', {}).then((me) => {
      this.asking = null;
      if (me.ok && this.bot && !this.bot.botInfo) this.bot.botInfo = me.value;
      return me;
    });
    return this.asking;
  }

  readonly getChat = (chatId: string): Promise<TelegramResult<ChatInfo>> => this.request('getChat', { chat_id: chatId });

  /** The CLI's setup's long poll, bounded by its length plus TELEGRAM_TIMEOUT_MS; `offset` confirms every update before it. */
  async getUpdates(
    q: { offset?: number; timeoutSec: number; allowedUpdates?: readonly string[]; limit?: number },
    signal?: AbortSignal,
  ): Promise<TelegramResult<RawUpdate[]>> {
    return this.request(
      'getUpdates',
      { offset: q.offset, timeout: q.timeoutSec, limit: q.limit, allowed_updates: q.allowedUpdates && [...q.allowedUpdates] },
      { timeoutMs: q.timeoutSec * 1000 + this.config.telegramTimeoutMs, signal },
    );
  }

  /** Where a failing update handler is reported (telegraf's default sets a failure exit code and rethrows). */
  onUpdateError(handler: (err: unknown) => void): void {
    this.bot?.catch((err) => handler(err));
  }

  /** An update that came by webhook, through polling's handlers (errors go to `onUpdateError`). */
  async handleUpdate(update: unknown): Promise<void> {
    await this.bot?.handleUpdate(update as Parameters<Telegraf['handleUpdate']>[0]);
  }
}
