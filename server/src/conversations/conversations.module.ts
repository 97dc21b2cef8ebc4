import { Module } from '@nestjs/common';
import { TelegramModule } from '../telegram/telegram.module';
import { ConversationsService } from './conversations.service';
import { TelegramLinksRepository } from './telegram-links.repository';
import { TelegramLinksService } from './telegram-links.service';

/**
 * "Continue in Telegram": the links `POST /leads` answers with (TelegramLinksService) and what the bot's private chat
 * makes of them (ConversationsService); the account a link bound (TelegramLinksRepository) for the card and GET /leads.
 */
@Module({
  imports: [TelegramModule],
  providers: [TelegramLinksRepository, TelegramLinksService, ConversationsService],
  exports: [TelegramLinksRepository, TelegramLinksService, ConversationsService],
})
export class ConversationsModule {}
