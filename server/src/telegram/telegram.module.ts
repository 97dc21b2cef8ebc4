import { Global, Logger, Module } from '@nestjs/common';
import { Telegram } from 'telegraf';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { TELEGRAM_API, type TelegramApi, telegrafApiRoot } from './telegram-api.token';
import { TelegramGateway } from './telegram.gateway';

@Global()
@Module({
  providers: [
    {
      provide: TELEGRAM_API,
      inject: [SERVER_CONFIG],
      useFactory: (config: ServerConfig): TelegramApi => {
        const { token, apiRoot } = config.telegram;
        if (!token) {
          new Logger('Telegram').warn('TELEGRAM_BOT_TOKEN is not set: leads are stored, publishing and alerts are paused');
          return null;
        }
        return new Telegram(token, { apiRoot: telegrafApiRoot(apiRoot) });
      },
    },
    TelegramGateway,
  ],
  exports: [TELEGRAM_API, TelegramGateway],
})
export class TelegramModule {}
