import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
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

/** The inbox: the Mini App's page (`/inbox`, without a build 503) and its API (`/inbox/api/*`), every API answer `Cache-Control: no-store`. */
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
export class InboxModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Set before the route's guard runs, so a refusal carries it too: the answers hold personal data and depend on who asks.
    consumer
      .apply((_req: Request, res: Response, next: NextFunction) => {
        res.setHeader('Cache-Control', 'no-store');
        next();
      })
      .forRoutes({ path: 'inbox/api/*path', method: RequestMethod.ALL });
  }
}
