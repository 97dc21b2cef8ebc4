import { Logger } from '@nestjs/common';
import { Command, Ctx, On, Start, Update } from 'nestjs-telegraf';
import { ConversationsService } from '../conversations/conversations.service';
import { CHOOSE_PREFIX, MessagesService } from '../conversations/messages.service';
import type { MessageMedia } from '../domain/lead-message';
import { LeadStatusService } from '../lead-status/lead-status.service';
import type { BotContext } from '../telegram/telegraf';
import { TelegramGateway } from '../telegram/telegram.gateway';
import { BotCommandsService, HELP_COMMAND, type AnsweredCommand } from './bot-commands.service';

type AnyMessage = Record<string, unknown> & { message_id: number };

/** What a message carries besides text, in the conversation's words; null for a text message. */
function mediaOf(message: AnyMessage): MessageMedia | null {
  if ('text' in message) return null;
  for (const kind of ['photo', 'document', 'voice', 'video', 'sticker'] as const) if (kind in message) return kind;
  return 'other';
}

function displayName(user: { first_name: string; last_name?: string; username?: string }): string {
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ');
  // Neither: empty, and the status service names the presser in the locale's words.
  return full || (user.username ? `@${user.username}` : '');
}

/** Thin bot handlers: read the update, call a service, answer (through the gateway, like every Bot API call). */
@Update()
export class LeadsBotUpdate {
  private readonly logger = new Logger('Bot');

  constructor(
    private readonly statuses: LeadStatusService,
    private readonly commands: BotCommandsService,
    private readonly telegram: TelegramGateway,
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
  ) {}

  /** `/start <payload>` in the private chat: a visitor's "Continue in Telegram" link (ConversationsService). */
  @Start()
  async onStart(@Ctx() ctx: BotContext): Promise<void> {
    const message = ctx.message;
    if (!message || !ctx.from || !ctx.chat) return;
    const text = 'text' in message ? message.text : '';
    const from = ctx.from;
    const reply = await this.conversations.start({
      chatType: ctx.chat.type,
      payload: text.replace(/^\/\S+\s*/, ''),
      from: { id: from.id, username: from.username ?? null, first_name: from.first_name || null, last_name: from.last_name ?? null },
    });
    if (reply === null) return;
    // Bound to several leads: which one this chat writes about, and a button per lead to choose another.
    const choice = await this.messages.choice(from.id);
    const sent = await this.telegram.send({
      chatId: String(ctx.chat.id),
      text: choice ? `${reply}\n\n${choice.text}` : reply,
      html: false,
      replyTo: message.message_id,
      ...(choice ? { keyboard: choice.keyboard } : {}),
    });
    if (!sent.ok) this.logger.warn(`start reply failed: ${sent.description}`);
  }

  /** `/stop` in the private chat: the visitor is unbound from their leads (MessagesService). */
  @Command('stop')
  async onStop(@Ctx() ctx: BotContext): Promise<void> {
    if (!ctx.message || !ctx.from || ctx.chat?.type !== 'private') return;
    const reply = await this.messages.stop(account(ctx.from));
    await this.answer(String(ctx.chat.id), reply, ctx.message.message_id, null);
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
        ? await this.messages.choose(account(query.from), data)
        : await this.statuses.press({ data, chatId, messageId, userId: query.from.id, userName: displayName(query.from) });
    const answered = await this.telegram.answerCallback(query.id, answer);
    if (!answered.ok) this.logger.warn(`callback not answered: ${answered.description}`);
  }

  @Command('stickers_new')
  onNew(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_new');
  }

  @Command('stickers_stats')
  onStats(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_stats');
  }

  @Command('stickers_forget')
  onForget(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_forget');
  }

  @Command('stickers_export')
  onExport(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_export');
  }

  @Command('stickers_chatid')
  onChatId(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_chatid');
  }

  @Command('stickers_inbox')
  onInbox(@Ctx() ctx: BotContext) {
    return this.command(ctx, 'stickers_inbox');
  }

  @Command(HELP_COMMAND)
  onHelp(@Ctx() ctx: BotContext) {
    return this.command(ctx, HELP_COMMAND);
  }

  private async command(ctx: BotContext, command: AnsweredCommand): Promise<void> {
    const text = ctx.message && 'text' in ctx.message ? ctx.message.text : '';
    const args = text.replace(/^\/\S+\s*/, '');
    const chatId = String(ctx.chat?.id ?? '');
    // In a forum, the answer goes into the command's topic (a reply in General carries a thread id too, but
    // is no topic message).
    const message = ctx.message as { message_thread_id?: number; is_topic_message?: boolean } | undefined;
    const threadId = message?.is_topic_message && message.message_thread_id ? message.message_thread_id : null;
    const reply = await this.commands.run({ command, chatId, threadId, userId: ctx.from?.id ?? 0, args, chatType: ctx.chat?.type });
    const sent = await this.telegram.send({
      chatId,
      threadId,
      text: reply.text,
      html: false,
      replyTo: ctx.message!.message_id,
      ...(reply.keyboard ? { keyboard: reply.keyboard } : {}),
    });
    if (!sent.ok) this.logger.warn(`command reply failed: ${sent.description}`);
  }

  /**
   * Any other message (registered last: commands are answered above). In the private chat, the visitor's message to
   * the team; in a group, a member's reply to a card or to a relayed message, for the visitor (MessagesService).
   */
  @On('message')
  async onMessage(@Ctx() ctx: BotContext): Promise<void> {
    const message = ctx.message as unknown as AnyMessage | undefined;
    if (!message || !ctx.from || !ctx.chat || ctx.from.is_bot) return;
    const text = typeof message.text === 'string' ? message.text : typeof message.caption === 'string' ? message.caption : null;
    if (text?.startsWith('/')) return;
    const incoming = { chatId: String(ctx.chat.id), messageId: message.message_id, from: account(ctx.from), text, media: mediaOf(message) };
    const thread = message as { message_thread_id?: number; is_topic_message?: boolean };
    const threadId = thread.is_topic_message && thread.message_thread_id ? thread.message_thread_id : null;
    let reply: string | null;
    if (ctx.chat.type === 'private') reply = await this.messages.fromVisitor(incoming);
    else {
      const replyTo = (message.reply_to_message as { message_id?: number } | undefined)?.message_id;
      if (replyTo === undefined) return;
      reply = await this.messages.fromTeam({ ...incoming, replyTo, authorName: displayName(ctx.from) || String(ctx.from.id) });
    }
    if (reply !== null) await this.answer(incoming.chatId, reply, message.message_id, threadId);
  }

  private async answer(chatId: string, text: string, replyTo: number, threadId: number | null): Promise<void> {
    const sent = await this.telegram.send({ chatId, threadId, text, html: false, replyTo });
    if (!sent.ok) this.logger.warn(`conversation answer failed: ${sent.description}`);
  }
}

function account(from: { id: number; username?: string; first_name: string; last_name?: string }) {
  return { id: from.id, username: from.username ?? null, first_name: from.first_name || null, last_name: from.last_name ?? null };
}
