import { type DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ExportModule } from './export/export.module';
import { ScheduleModule } from '@nestjs/schedule';
import { ThrottlerModule } from '@nestjs/throttler';
import { BotModule } from './bot/bot.module';
import { ClockModule } from './clock/clock.module';
import { ConfigModule } from './config/config.module';
import type { ServerConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { throttlerOptions } from './http/caller-throttle';
import { I18nModule } from './i18n/i18n.module';
import { HousekeepingModule } from './housekeeping/housekeeping.module';
import { InboxModule } from './inbox/inbox.module';
import { LeadsModule } from './leads/leads.module';
import { HealthModule } from './health/health.module';
import { OutboxModule } from './outbox/outbox.module';
import { TelegramModule } from './telegram/telegram.module';
import { TraceModule } from './trace/trace.module';

/** The app-wide modules, then the features that face the outside; every other module comes in through their imports. */
@Module({})
export class AppModule {
  static register(config: ServerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.register(config),
        I18nModule,
        ClockModule,
        ScheduleModule.forRoot(),
        EventEmitterModule.forRoot(),
        ThrottlerModule.forRoot(throttlerOptions(config)),
        DatabaseModule,
        TelegramModule.forRoot(config),
        LeadsModule,
        TraceModule,
        ExportModule,
        OutboxModule,
        HousekeepingModule,
        HealthModule,
        InboxModule,
        // Without a token there is no bot: leads are stored, cards wait.
        ...(config.telegram.token ? [BotModule.register(config)] : []),
      ],
    };
  }
}
