import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { CardService } from '../cards/card.service';
import { LeadsModule } from '../leads/leads.module';
import { SettingsRepository } from '../settings/settings.repository';
import { OutboxRepository } from './outbox.repository';
import { OutboxScheduler } from './outbox.scheduler';
import { OutboxService } from './outbox.service';

@Module({
  imports: [AlertsModule, LeadsModule],
  providers: [OutboxService, OutboxRepository, OutboxScheduler, CardService, SettingsRepository],
  exports: [OutboxService, OutboxRepository, CardService, SettingsRepository],
})
export class OutboxModule {}
