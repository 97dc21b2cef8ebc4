import { Module } from '@nestjs/common';
import { TelegrafModule } from 'nestjs-telegraf';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LeadStatusModule } from '../lead-status/lead-status.module';
import { OperationsModule } from '../operations.module';
import { OutboxModule } from '../outbox/outbox.module';
import { telegrafApiRoot } from '../telegram/telegram-api.token';
import { BotCommandsService } from './bot-commands.service';
import { BotLauncher } from './bot.launcher';
import { LeadsBotUpdate } from './leads-bot.update';

/** The Telegram bot: card buttons and commands. Only in the app when TELEGRAM_BOT_TOKEN is set. */
@Module({
  imports: [
    TelegrafModule.forRootAsync({
      inject: [SERVER_CONFIG],
      useFactory: (config: ServerConfig) => ({
        token: config.telegram.token!,
        options: { telegram: { apiRoot: telegrafApiRoot(config.telegram.apiRoot) } },
        launchOptions: false,
      }),
    }),
    LeadStatusModule,
    OperationsModule,
    OutboxModule,
  ],
  providers: [LeadsBotUpdate, BotCommandsService, BotLauncher],
})
export class BotModule {}
