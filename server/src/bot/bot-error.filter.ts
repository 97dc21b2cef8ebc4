import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Logger } from '@nestjs/common';
import { TelegrafArgumentsHost } from 'nestjs-telegraf';
import { errorText } from '@stickers/shared';
import { MESSAGES } from '../i18n/i18n.module';
import { catalogueOf, type Messages } from '../i18n';
import { type BotContext, TelegramGateway } from '../telegram/telegram.gateway';

/**
 * A bot handler that throws (the database cannot be read or written: a lock held past DATABASE_BUSY_TIMEOUT_MS, a full
 * disk, PostgreSQL gone) still answers, so nobody is left with a spinner or silence: a press is told to press again, a
 * command and a message to be sent again. Nothing was changed; the error is logged as `update failed`.
 */
@Catch()
export class BotErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Bot');

  constructor(
    private readonly telegram: TelegramGateway,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async catch(err: unknown, host: ArgumentsHost): Promise<void> {
    const ctx = TelegrafArgumentsHost.create(host).getContext<BotContext>();
    this.logger.error({ msg: 'update failed', update: ctx.updateType, error: errorText(err) });
    const query = ctx.callbackQuery;
    const message = ctx.message as { message_id: number; entities?: { type: string; offset: number }[] } | undefined;
    // In the private chat (a visitor's) in their Telegram app's language where the bot has it; in a group, LEADS_LOCALE's.
    const t = ctx.chat?.type === 'private' ? catalogueOf(ctx.from?.language_code, this.t) : this.t;
    let answered;
    if (query) answered = await this.telegram.answerCallback(query.id, t.press.failed);
    else if (message && ctx.chat) {
      const command = message.entities?.[0]?.type === 'bot_command' && message.entities[0].offset === 0;
      const text = command ? t.commands.failed : t.conversation.failed;
      answered = await this.telegram.send({ chatId: String(ctx.chat.id), text, html: false, replyTo: message.message_id });
    }
    if (answered && !answered.ok) this.logger.warn(`failure not answered: ${answered.description}`);
  }
}
