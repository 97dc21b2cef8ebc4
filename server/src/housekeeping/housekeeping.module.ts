import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { ChatsModule } from '../chats/chats.module';
import { ClusterModule } from '../cluster/cluster.module';
import { ChartsModule } from '../charts/charts.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ReportsModule } from '../reports/reports.module';
import { TelegramModule } from '../telegram/telegram.module';
import { HousekeepingService } from './housekeeping.service';

/** The once-a-minute jobs: reminders, the daily digest (with its chart, ChartsModule), retention, pruning. */
@Module({
  imports: [RepositoriesModule, AnonymisationModule, ClusterModule, ReportsModule, TelegramModule, AlertsModule, ChatsModule, ChartsModule],
  providers: [HousekeepingService],
})
export class HousekeepingModule {}
