import { Logger, UseFilters } from '@nestjs/common';
import { Command, Ctx, On, Start, Update } from 'nestjs-telegraf';
import { CHOOSE_PREFIX, MessagesService, type Visitor } from '../conversations/messages.service';
import { BOT_COMMAND_NAMES, INBOX_START } from '../domain/bot-commands';
import type { MessageMedia } from '../domain/lead-message';
import { personName } from '../domain/telegram-account';
import { LeadStatusService } from '../lead-status/lead-status.service';
import { type BotContext, type BotReply, cutTo, TELEGRAM_TEXT_MAX, TelegramGateway } from '../telegram/telegram.gateway';
import { BotCommandsService, HELP_COMMAND, type AnsweredCommand } from './bot-commands.service';
import { BotErrorFilter } from './bot-error.filter';

type AnyMessage = Record<string, unknown> & { message_id: number; message_thread_id?: number; is_topic_message?: boolean };
type User = NonNullable<BotContext['from']>;

/** What a person may send beyond MESSAGE_MEDIA's kinds, kept as `other`; anything else is a service notice (a pin…). */
const OTHER_CONTENT = ['audio', 'video_note', 'animation', 'location', 'contact', 'venue', 'poll', 'dice', 'story', 'game'];

/** What a message carries besides text, in the conversation's words; null for a text, undefined for a service notice. */
function mediaOf(message: AnyMessage): MessageMedia | null | undefined {
  if ('text' in message) return null;
  for (const kind of ['photo', 'document', 'voice', 'video', 'sticker'] as const) if (kind in message) return kind;
  return OTHER_CONTENT.some((kind) => kind in message) ? 'other' : undefined;
}

function account(from: User): Visitor {
  const { id, username, first_name, last_name, language_code } = from;
  return { id, username: username ?? null, first_name: first_name || null, last_name: last_name ?? null, language_code };
}

/** A forum's topic the message is in (a reply in General carries a thread id too, but is no topic message). */
function topicOf(message: AnyMessage | undefined): number | null {
  return message?.is_topic_message && message.message_thread_id ? message.message_thread_id : null;
}

const argsOf = (text: string) => text.replace(/^\/\S+\s*/, '');

/** Thin bot handlers: read the update, call a service, answer (through the gateway, like every Bot API call). */
@Update()
@UseFilters(BotErrorFilter)
export class LeadsBotUpdate {
  private readonly logger = new Logger('Bot');

  constructor(
    private readonly statuses: LeadStatusService,
    private readonly commands: BotCommandsService,
    private readonly telegram: TelegramGateway,
    private readonly messages: MessagesService,
  ) {}

  /** `/start <payload>` in the private chat: a visitor's "Continue in Telegram" link, or the group's inbox button. */
  @Start()
  async onStart(@Ctx() ctx: BotContext): Promise<void> {
    if (!ctx.message || !ctx.from || !ctx.chat) return;
    const payload = argsOf('text' in ctx.message ? ctx.message.text : '');
    if (payload === INBOX_START && ctx.chat.type === 'private') {
      const call = { command: 'stickers_inbox' as const, chatId: String(ctx.chat.id), threadId: null, userId: ctx.from.id, args: '' };
      return this.reply(ctx, 'command reply failed', await this.commands.run({ ...call, chatType: 'private' }));
    }
    await this.reply(ctx, 'start reply failed', await this.messages.start(ctx.chat.type, payload, account(ctx.from)));
  }

  /** `/stop` in the private chat: the visitor is unbound from their leads. */
  @Command('stop')
  async onStop(@Ctx() ctx: BotContext): Promise<void> {
    if (!ctx.message || !ctx.from || ctx.chat?.type !== 'private') return;
    await this.reply(ctx, 'conversation answer failed', await this.messages.stop(account(ctx.from)));
  }

  @On('callback_query')
  async onButton(@Ctx() ctx: BotContext): Promise<void> {
    const query = ctx.callbackQuery!;
    const data = 'data' in query ? query.data : '';
    // A press from an inline message has no message: it is no card of ours, and the service refuses it by its chat.
    const chatId = query.message ? String(query.message.chat.id) : '';
    const messageId = query.message?.message_id ?? 0;
    const answer =
      data.startsWith(CHOOSE_PREFIX) && query.message?.chat.type === 'private'
        ? await this.messages.choose(account(query.from), data, {
            chatId,
            messageId,
            text: query.message && 'text' in query.message ? query.message.text : undefined,
          })
        : await this.statuses.press({ data, chatId, messageId, userId: query.from.id, userName: personName(query.from) });
    const answered = await this.telegram.answerCallback(query.id, answer);
    if (!answered.ok) this.logger.warn(`callback not answered: ${answered.description}`);
  }

  /** The menu's commands and `/help`; telegraf names the one sent in `ctx.command`. */
  @Command([...BOT_COMMAND_NAMES, HELP_COMMAND])
  async onCommand(@Ctx() ctx: BotContext & { command: AnsweredCommand }): Promise<void> {
    const message = ctx.message as unknown as AnyMessage & { text: string };
    // In a forum, the answer goes into the command's topic.
    const threadId = topicOf(message);
    const { command, from, chat } = ctx;
    const call = {
      command,
      chatId: String(chat?.id ?? ''),
      threadId,
      userId: from?.id ?? 0,
      chatType: chat?.type,
      language: from?.language_code,
    };
    await this.reply(ctx, 'command reply failed', await this.commands.run({ ...call, args: argsOf(message.text) }), threadId);
  }

  /** Any other message (registered last): a visitor's in the private chat, a member's reply to a card in a group. */
  @On('message')
  async onMessage(@Ctx() ctx: BotContext): Promise<void> {
    const message = ctx.message as unknown as AnyMessage | undefined;
    if (!message || !ctx.from || !ctx.chat || ctx.from.is_bot) return;
    const text = typeof message.text === 'string' ? message.text : typeof message.caption === 'string' ? message.caption : null;
    // In a group, a command (an unknown one of ours, or another bot's) is no message for a lead; a caption never is
    // one, nor a text that only starts with "/" ("/ 30 гостей"). In the private chat the bot's own commands are handled
    // above, so what is left ("/цена?") is the visitor's words: relayed like any text.
    const first = (message.entities as { type: string; offset: number }[] | undefined)?.[0];
    const command = typeof message.text === 'string' && first?.type === 'bot_command' && first.offset === 0;
    if (command && ctx.chat.type !== 'private') return;
    const media = mediaOf(message);
    if (media === undefined) return;
    const incoming = { chatId: String(ctx.chat.id), messageId: message.message_id, from: account(ctx.from), text, media };
    const replyTo = (message.reply_to_message as { message_id?: number } | undefined)?.message_id;
    let reply: string | null;
    if (ctx.chat.type === 'private') reply = await this.messages.fromVisitor({ ...incoming, replyTo });
    else {
      if (replyTo === undefined) return;
      reply = await this.messages.fromTeam({ ...incoming, replyTo, authorName: personName(ctx.from) || String(ctx.from.id) });
    }
    await this.reply(ctx, 'conversation answer failed', reply, topicOf(message));
  }

  /** A reply to the update's message in its chat (and topic), if any; a failed send is logged as `failure`. */
  private async reply(ctx: BotContext, failure: string, reply: string | BotReply | null, threadId: number | null = null): Promise<void> {
    if (reply === null) return;
    const { text, keyboard } = typeof reply === 'string' ? { text: reply, keyboard: undefined } : reply;
    // Telegram refuses a longer text outright: cut, an answer still comes (a long /stickers_new at worst).
    const message = { chatId: String(ctx.chat?.id ?? ''), html: false, text: cutTo(text, TELEGRAM_TEXT_MAX), keyboard };
    const sent = await this.telegram.inTopic(threadId, (thread) =>
      this.telegram.send({ ...message, threadId: thread, replyTo: thread === threadId ? ctx.message?.message_id : undefined }),
    );
    if (!sent.ok) this.logger.warn(`${failure}: ${sent.description}`);
  }
}
