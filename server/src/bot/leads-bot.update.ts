import { Logger } from '@nestjs/common';
import { Command, Ctx, On, Update } from 'nestjs-telegraf';
import type { Context } from 'telegraf';
import { LeadStatusService } from '../lead-status/lead-status.service';
import { BotCommandsService, type BotCommand } from './bot-commands.service';

function displayName(user: { first_name: string; last_name?: string; username?: string }): string {
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return full || (user.username ? `@${user.username}` : 'без имени');
}

/** Thin bot handlers: read the update, call a service, answer. */
@Update()
export class LeadsBotUpdate {
  private readonly logger = new Logger('Bot');

  constructor(
    private readonly statuses: LeadStatusService,
    private readonly commands: BotCommandsService,
  ) {}

  @On('callback_query')
  async onButton(@Ctx() ctx: Context): Promise<void> {
    const query = ctx.callbackQuery!;
    const data = 'data' in query ? query.data : '';
    const chatId = query.message ? String(query.message.chat.id) : '';
    const answer = await this.statuses.press({ data, chatId, userId: query.from.id, userName: displayName(query.from) });
    await ctx.answerCbQuery(answer).catch((err: unknown) => this.logger.warn(`callback not answered: ${String(err)}`));
  }

  @Command('stickers_new')
  onNew(@Ctx() ctx: Context) {
    return this.command(ctx, 'stickers_new');
  }

  @Command('stickers_stats')
  onStats(@Ctx() ctx: Context) {
    return this.command(ctx, 'stickers_stats');
  }

  @Command('stickers_forget')
  onForget(@Ctx() ctx: Context) {
    return this.command(ctx, 'stickers_forget');
  }

  private async command(ctx: Context, command: BotCommand): Promise<void> {
    const text = ctx.message && 'text' in ctx.message ? ctx.message.text : '';
    const args = text.replace(/^\/\S+\s*/, '');
    const reply = await this.commands.run({ command, chatId: String(ctx.chat?.id ?? ''), userId: ctx.from?.id ?? 0, args });
    await ctx.reply(reply, { reply_parameters: { message_id: ctx.message!.message_id, allow_sending_without_reply: true } }).catch((err: unknown) =>
      this.logger.warn(`command reply failed: ${String(err)}`),
    );
  }
}
