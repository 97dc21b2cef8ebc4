import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { ChartsModule } from '../charts/charts.module';
import { ChatsModule } from '../chats/chats.module';
import { ConversationsModule } from '../conversations/conversations.module';
import { ExportModule } from '../export/export.module';
import { LeadStatusModule } from '../lead-status/lead-status.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { TraceModule } from '../trace/trace.module';
import { InboxAccessService } from '../access/inbox-access.service';
import { InboxAuthGuard } from '../access/inbox-auth.guard';
import { InboxController } from './inbox.controller';
import { InboxService } from './inbox.service';
import { NoStoreMiddleware } from './no-store.middleware';
import { InboxPageModule } from './page/inbox-page.module';

/**
 * The inbox: the Mini App's page (`/inbox`, InboxPageModule) and its API (`/inbox/api/*`): launch data checked on every
 * call, the leads through the services that own them, the charts (ChartsModule), every API answer `Cache-Control: no-store`.
 */
@Module({
  imports: [
    InboxPageModule,
    ExportModule,
    TraceModule,
    LeadStatusModule,
    AnonymisationModule,
    ChatsModule,
    TelegramModule,
    ChartsModule,
    RepositoriesModule,
    ConversationsModule,
  ],
  controllers: [InboxController],
  providers: [InboxAccessService, InboxAuthGuard, InboxService],
})
export class InboxModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(NoStoreMiddleware).forRoutes({ path: 'inbox/api/*path', method: RequestMethod.ALL });
  }
}
