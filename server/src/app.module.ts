import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ClockModule } from './clock/clock';
import { ConfigModule } from './config/config.module';
import type { ServerConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { LeadsModule } from './leads/leads.module';
import { OutboxModule } from './outbox/outbox.module';
import { SCHEDULED_JOBS } from './outbox/outbox.scheduler';
import { BotModule } from './bot/bot.module';
import { BOT_POLLING } from './bot/bot.launcher';
import { OperationsModule } from './operations.module';
import { ObservabilityCoreModule, ObservabilityModule } from './observability/observability.module';
import { TelegramModule } from './telegram/telegram.module';

@Module({})
export class AppModule {
  static register(config: ServerConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        ConfigModule.register(config),
        ClockModule,
        ScheduleModule.forRoot(),
        DatabaseModule,
        ObservabilityCoreModule,
        TelegramModule,
        LeadsModule,
        OutboxModule,
        OperationsModule,
        ObservabilityModule,
        // Without a token there is no bot: leads are stored, cards wait (CONTRACT section 2).
        ...(config.telegram.token ? [BotModule] : []),
      ],
      providers: [
        { provide: SCHEDULED_JOBS, useValue: true },
        { provide: BOT_POLLING, useValue: true },
      ],
      exports: [SCHEDULED_JOBS, BOT_POLLING],
    };
  }
}
