import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Inject, Logger, Post, Req, Res, type Type, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { lingerAfterAnswer, type LingerBounds, errorText } from '@stickers/shared';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { ApiError, UploadAbortedError } from '../http/api-error';
import { CallerThrottleGuard, Throttled } from '../http/caller-throttle';
import { readJsonObject } from '../http/json-body.reader';
import { TelegramGateway } from '../telegram/telegram.gateway';
import { TelegramUpdatesService } from './telegram-updates.service';

/** The header Telegram sends the webhook's `secret_token` in. */
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';
/** An update is a few KB; Telegram's largest (a long message with entities) stays far below this. */
const MAX_UPDATE_BYTES = 1024 * 1024;
/** After a 401 or a 413 the rest of the body is read and thrown away, bounded, so the caller reads its answer. */
const WEBHOOK_LINGER: LingerBounds = { idleMs: 5_000, totalMs: 10_000, maxBytes: MAX_UPDATE_BYTES };

/** Equal in constant time: both sides hashed first, so neither the length nor a common prefix shows in the timing. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** TELEGRAM_WEBHOOK_URL's route (not in OpenAPI): the secret checked before the body is read, the 200 after handling. */
export function telegramWebhookController(path: string): Type {
  @ApiExcludeController()
  @Controller()
  class TelegramUpdatesController {
    private readonly logger = new Logger('Bot');

    constructor(
      private readonly telegram: TelegramGateway,
      private readonly updates: TelegramUpdatesService,
      @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    ) {}

    @Post(path)
    @Throttled('webhook')
    @UseGuards(CallerThrottleGuard)
    async receive(@Req() req: Request, @Res() res: Response): Promise<void> {
      const given = req.headers[TELEGRAM_SECRET_HEADER];
      if (typeof given !== 'string' || !sameSecret(given, this.config.telegram.webhook!.secret)) {
        lingerAfterAnswer(req, WEBHOOK_LINGER);
        res.status(401).set('Connection', 'close').end();
        return;
      }
      let update: Record<string, unknown>;
      try {
        update = await readJsonObject(req, { limit: MAX_UPDATE_BYTES, linger: WEBHOOK_LINGER });
      } catch (err) {
        if (err instanceof UploadAbortedError) {
          res.destroy();
          return;
        }
        if (!(err instanceof ApiError)) throw err;
        // Bare statuses, as every answer of this route.
        if (err.status === 413) res.status(413).set(err.headers).end();
        else res.status(400).end();
        return;
      }
      if (typeof update.update_id !== 'number') {
        res.status(400).end();
        return;
      }
      const id = update.update_id;
      // Delivered again: answered, never handled twice; being handled right now: Telegram tries again later.
      const claim = await this.updates.claim(id);
      if (claim !== 'handle') {
        res.status(claim === 'handled' ? 200 : 503).end();
        return;
      }
      try {
        await this.telegram.handleUpdate(update);
      } catch (err) {
        // Handlers report their own failures; one that escapes must not make Telegram resend the update forever.
        this.logger.error(`webhook update failed: ${errorText(err)}`);
      }
      await this.updates.handled(id);
      res.status(200).end();
    }
  }
  return TelegramUpdatesController;
}
