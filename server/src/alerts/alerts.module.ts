import { Module } from '@nestjs/common';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { AlertsService } from './alerts.service';

@Module({ imports: [RepositoriesModule, TelegramModule, MetricsModule], providers: [AlertsService], exports: [AlertsService] })
export class AlertsModule {}
