import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ClockModule } from './clock/clock';
import { ConfigModule } from './config/config.module';
import type { ServerConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { LeadsModule } from './leads/leads.module';
import { OutboxModule } from './outbox/outbox.module';
import { SCHEDULED_JOBS } from './outbox/outbox.scheduler';
import { TelegramModule } from './telegram/telegram.module';

@Module({})
export class AppModule {
  static register(config: ServerConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [ConfigModule.register(config), ClockModule, ScheduleModule.forRoot(), DatabaseModule, TelegramModule, LeadsModule, OutboxModule],
      providers: [{ provide: SCHEDULED_JOBS, useValue: true }],
      exports: [SCHEDULED_JOBS],
    };
  }
}
