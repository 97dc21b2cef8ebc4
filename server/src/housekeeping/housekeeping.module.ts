import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { ChatsModule } from '../chats/chats.module';
import { ClusterModule } from '../cluster/cluster.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ReportsModule } from '../reports/reports.module';
import { TelegramModule } from '../telegram/telegram.module';
import { HousekeepingScheduler } from './housekeeping.scheduler';
import { HousekeepingService } from './housekeeping.service';

/** The once-a-minute jobs: reminders, the daily digest, retention, pruning. */
@Module({
  imports: [RepositoriesModule, AnonymisationModule, ClusterModule, ReportsModule, TelegramModule, AlertsModule, ChatsModule],
  providers: [HousekeepingService, HousekeepingScheduler],
})
export class HousekeepingModule {}
