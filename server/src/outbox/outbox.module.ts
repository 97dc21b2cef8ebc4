import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { CardsModule } from '../cards/cards.module';
import { ChatsModule } from '../chats/chats.module';
import { ClusterModule } from '../cluster/cluster.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { CardPublisher } from './card-publisher';
import { CardRewriter } from './card-rewriter';
import { FallbackAnswerer } from './fallback-answerer';
import { OutboxGate } from './outbox-gate';
import { OutboxService } from './outbox.service';
import { RepeatNotifier } from './repeat-notifier';
import { MessageSender } from './message-senders';
import { ConversationsModule } from '../conversations/conversations.module';

/** docs/requirements.md §4: one queue and one runner for every effect on the outside world; ChatsModule passed on. */
@Module({
  imports: [
    RepositoriesModule,
    AlertsModule,
    CardsModule,
    ChatsModule,
    ClusterModule,
    MetricsModule,
    TelegramModule,
    WebhooksModule,
    ConversationsModule,
  ],
  providers: [OutboxService, OutboxGate, CardPublisher, CardRewriter, RepeatNotifier, FallbackAnswerer, MessageSender],
  exports: [OutboxService, ChatsModule],
})
export class OutboxModule {}
