import { type DynamicModule, Module } from '@nestjs/common';
import { TelegrafModule } from 'nestjs-telegraf';
import type { ServerConfig } from '../config/config';
import { TelegramGateway, telegrafApiRoot } from './telegram.gateway';
import { TelegramPolling } from './telegram-polling';
import { messagesInTurn } from './messages-in-turn';

/** forRoot's own module: were it TelegramModule itself, Nest would build a second module, and a second gateway. */
@Module({})
class TelegramRootModule {}

/** The gateway, for every module that calls Telegram, and the polling control: one instance of each per app. */
@Module({ providers: [TelegramGateway, TelegramPolling], exports: [TelegramGateway, TelegramPolling] })
export class TelegramModule {
  /** The root's import: the one telegraf bot when TELEGRAM_BOT_TOKEN is set, launched by BotLauncher, not nestjs-telegraf. */
  static forRoot(config: ServerConfig): DynamicModule {
    const { token, apiRoot } = config.telegram;
    const bot = token
      ? [
          TelegrafModule.forRoot({
            token,
            options: { telegram: { apiRoot: telegrafApiRoot(apiRoot) } },
            launchOptions: false,
            middlewares: [messagesInTurn()],
          }),
        ]
      : [];
    return { module: TelegramRootModule, imports: [...bot, TelegramModule], exports: [TelegramModule] };
  }
}
