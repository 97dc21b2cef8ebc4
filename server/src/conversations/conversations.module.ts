import { Module } from '@nestjs/common';
import { ChatsModule } from '../chats/chats.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { LeadMessagesRepository } from './lead-messages.repository';
import { MessagesService } from './messages.service';
import { TelegramLinksRepository } from './telegram-links.repository';

/** "Continue in Telegram": the links, the accounts they bind, and the conversation between the visitor and the team. */
@Module({
  imports: [TelegramModule, RepositoriesModule, ChatsModule],
  providers: [TelegramLinksRepository, LeadMessagesRepository, MessagesService],
  exports: [TelegramLinksRepository, LeadMessagesRepository, MessagesService],
})
export class ConversationsModule {}
