import { Global, Logger, Module } from '@nestjs/common';
import { Telegram } from 'telegraf';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';

/**
 * The Bot API client (telegraf's `Telegram`) pointed at TELEGRAM_API_ROOT, or null without TELEGRAM_BOT_TOKEN:
 * then leads are still stored and publishing waits (CONTRACT section 2).
 */
export const TELEGRAM_API = Symbol('TelegramApi');
export type TelegramApi = Telegram | null;

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
        // Telegraf drops a path prefix of apiRoot unless it ends with "/" (STACK.md).
        return new Telegram(token, { apiRoot: apiRoot.endsWith('/') ? apiRoot : `${apiRoot}/` });
      },
    },
  ],
  exports: [TELEGRAM_API],
})
export class TelegramModule {}
