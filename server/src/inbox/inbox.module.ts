import { Module } from '@nestjs/common';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { ChartsModule } from '../charts/charts.module';
import { ChatsModule } from '../chats/chats.module';
import { ConversationsModule } from '../conversations/conversations.module';
import { ExportModule } from '../export/export.module';
import { LeadStatusModule } from '../lead-status/lead-status.module';
import { TelegramModule } from '../telegram/telegram.module';
import { TraceModule } from '../trace/trace.module';
import { InboxAccessService } from '../access/inbox-access.service';
import { InboxAuthGuard } from '../access/inbox-auth.guard';
import { InboxController } from './inbox.controller';
import { InboxService } from './inbox.service';
import { InboxPageController, inboxPageDir } from './page/inbox-page.controller';

/** The inbox: the Mini App's page (`/inbox`, without a build 503) and its API (`/inbox/api/*`). */
@Module({
  imports: [
    ExportModule,
    TraceModule,
    LeadStatusModule,
    AnonymisationModule,
    ChatsModule,
    TelegramModule,
    ChartsModule,
    ConversationsModule,
  ],
  controllers: [InboxController, InboxPageController],
  providers: [InboxAccessService, InboxAuthGuard, InboxService, inboxPageDir],
})
export class InboxModule {}
