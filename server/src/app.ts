import { type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import type { ServerConfig } from './config/config';

export interface CreateAppOptions {
  logger?: LoggerService | false;
}

/**
 * Builds the app as production runs it. The body parser is off: `POST /leads` reads its own body after the
 * secret check, with a hard size limit (see json-body.reader.ts).
 */
export async function createApp(config: ServerConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    logger: options.logger,
  });
  configureApp(app);
  return app;
}

/** What every instance of the app gets, in production and in tests alike. */
export function configureApp(app: INestApplication): void {
  (app as NestExpressApplication).disable('x-powered-by');
  (app as NestExpressApplication).set('etag', false);
}
