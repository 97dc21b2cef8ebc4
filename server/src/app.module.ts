import { type DynamicModule, Module } from '@nestjs/common';
import { ClockModule } from './clock/clock';
import { ConfigModule } from './config/config.module';
import type { ServerConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { LeadsModule } from './leads/leads.module';
import { TelegramModule } from './telegram/telegram.module';

@Module({})
export class AppModule {
  static register(config: ServerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ConfigModule.register(config), ClockModule, DatabaseModule, TelegramModule, LeadsModule],
    };
  }
}
