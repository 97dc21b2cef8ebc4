import { type DynamicModule, Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { ClusterModule } from '../cluster/cluster.module';
import { ConversationsModule } from '../conversations/conversations.module';
import type { ServerConfig } from '../config/config';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { ExportModule } from '../export/export.module';
import { LeadStatusModule } from '../lead-status/lead-status.module';
import { OutboxModule } from '../outbox/outbox.module';
import { ReportsModule } from '../reports/reports.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { BotCommandsService } from './bot-commands.service';
import { BOT_POLLING, BOT_RETRY_DEFAULT_MS, BOT_RETRY_MS, BotLauncher } from './bot.launcher';
import { LeadsBotUpdate } from './leads-bot.update';
import { telegramWebhookController } from './telegram-updates.controller';
import { TelegramUpdatesService } from './telegram-updates.service';

/** The bot's handlers, its launcher and the webhook's route; in the app only with TELEGRAM_BOT_TOKEN. */
@Module({
  imports: [
    AlertsModule,
    TelegramModule,
    ExportModule,
    LeadStatusModule,
    AnonymisationModule,
    ReportsModule,
    OutboxModule,
    ClusterModule,
    RepositoriesModule,
    ConversationsModule,
  ],
  // True in production; tests that feed updates by hand override it.
  providers: [
    LeadsBotUpdate,
    BotCommandsService,
    BotLauncher,
    TelegramUpdatesService,
    { provide: BOT_POLLING, useValue: true },
    { provide: BOT_RETRY_MS, useValue: BOT_RETRY_DEFAULT_MS },
  ],
})
export class BotModule {
  static register(config: ServerConfig): DynamicModule {
    const webhook = config.telegram.webhook;
    return { module: BotModule, controllers: webhook ? [telegramWebhookController(webhook.path)] : [] };
  }
}
