import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { CardsModule } from '../cards/cards.module';
import { ChatsModule } from '../chats/chats.module';
import { ClusterModule } from '../cluster/cluster.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { CardPublisher } from './card-publisher';
import { CardRewriter } from './card-rewriter';
import { FallbackAnswerer } from './fallback-answerer';
import { OutboxAlerts } from './outbox-alerts';
import { OutboxGate } from './outbox-gate';
import { OutboxScheduler } from './outbox.scheduler';
import { OutboxService } from './outbox.service';
import { RepeatNotifier } from './repeat-notifier';

/**
 * docs/requirements.md §4. New leads are heard through the `lead.accepted` event, so this module does not import the
 * leads feature. ChatsModule is passed on: whoever uses the outbox's cards asks it which chat is the leads group.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, CardsModule, ChatsModule, ClusterModule, MetricsModule, TelegramModule],
  providers: [OutboxService, OutboxScheduler, OutboxGate, OutboxAlerts, CardPublisher, CardRewriter, RepeatNotifier, FallbackAnswerer],
  exports: [OutboxService, ChatsModule],
})
export class OutboxModule {}
