import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { ConfigError, loadServerConfig, type ServerConfig } from './config/config';
import { databasePathProblem, databaseUrlProblem } from './database/database';

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
    // A failing start must reach main's one-line report, not process.abort().
    abortOnError: false,
  });
  configureApp(app);
  return app;
}

/** What every instance of the app gets, in production and in tests alike. */
export function configureApp(app: INestApplication): void {
  (app as NestExpressApplication).disable('x-powered-by');
  (app as NestExpressApplication).set('etag', false);
}

export interface StartedServer {
  app: INestApplication;
  config: ServerConfig;
  /** The address actually bound (HOST, or every interface; the port PORT or, for 0, the one chosen). */
  address: AddressInfo;
}

/**
 * What `main.ts` does, minus the process: read the environment (ConfigError lists every problem), check that
 * the database opens (DATABASE_URL's PostgreSQL or DATABASE_PATH's file: a ConfigError naming the variable, not the bare driver message), build the app and listen
 * on PORT, on HOST when it is set (every interface otherwise).
 */
export async function startFromEnv(
  env: Record<string, string | undefined>,
  options: { logger?: (config: ServerConfig) => LoggerService | false } = {},
): Promise<StartedServer> {
  const config = loadServerConfig(env);
  const problem = config.databaseUrl ? await databaseUrlProblem(config.databaseUrl) : databasePathProblem(config.databasePath);
  if (problem) throw new ConfigError([problem]);
  const app = await createApp(config, { logger: options.logger?.(config) });
  try {
    if (config.host === null) await app.listen(config.port);
    else await app.listen(config.port, config.host);
  } catch (err) {
    await app.close();
    throw err;
  }
  const address = (app.getHttpServer() as Server).address() as AddressInfo;
  return { app, config, address };
}
