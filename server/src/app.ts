import type { AddressInfo } from 'node:net';
import { type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { ConfigError, loadServerConfig, type ServerConfig } from './config/config';
import { databasePathProblem, databaseUrlProblem, describeDatabaseUrl } from './database/database';
import { closeAfterEarlyAnswer } from './http/linger';
import { OpenApiDocument } from './health/openapi';
import { RouteFaultFilter } from './http/api-error.filter';

/** What every instance of the app gets, in production and in tests alike. */
export function configureApp(app: INestApplication): void {
  (app as NestExpressApplication).disable('x-powered-by');
  (app as NestExpressApplication).set('etag', false);
  // Before every route (and the 404 of none): an answer given before the body was read lingers, then closes.
  app.use(closeAfterEarlyAnswer);
  app.useGlobalFilters(new RouteFaultFilter(app.getHttpAdapter()));
  app.get(OpenApiDocument).describe(app);
}

/**
 * What `main.ts` does, minus the process: the configuration and the database checked (a ConfigError naming the
 * variable), the app built and listening; no body parser: the routes read their own body after their guards.
 */
export async function startFromEnv(
  env: Record<string, string | undefined>,
  options: { logger?: (config: ServerConfig) => LoggerService | false } = {},
): Promise<{ app: INestApplication; config: ServerConfig; address: AddressInfo }> {
  const config = loadServerConfig(env);
  const problem = config.databaseUrl ? await databaseUrlProblem(config.databaseUrl) : databasePathProblem(config.databasePath);
  if (problem) throw new ConfigError([problem]);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    logger: options.logger?.(config),
    // A failing start must reach main's one-line report, not process.abort().
    abortOnError: false,
  });
  configureApp(app);
  try {
    if (config.host === null) await app.listen(config.port);
    else await app.listen(config.port, config.host);
  } catch (err) {
    await app.close();
    const problem = listenProblem(config, err);
    throw problem ? new ConfigError([problem]) : err;
  }
  const address = app.getHttpServer().address() as AddressInfo;
  return { app, config, address };
}

/** The address the operator chose that cannot be listened on: one line naming its variable (null: another failure). */
function listenProblem(config: ServerConfig, err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  const where = config.host === null ? `port ${config.port}` : `${config.host}:${config.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `PORT=${config.port}: ${where} is already in use (EADDRINUSE: another process listens there): stop it, or choose another PORT`;
    case 'EACCES':
      return `PORT=${config.port}: this process may not listen on ${where} (EACCES; ports below 1024 need privileges): choose another PORT`;
    case 'EADDRNOTAVAIL':
      return `HOST=${config.host}: not an address of this machine (EADDRNOTAVAIL): use one of its addresses, or leave HOST empty`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST=${config.host}: the host name does not resolve (${code}): use an address of this machine, or leave HOST empty`;
    default:
      return null;
  }
}

/** The one line a started server logs about itself (main.ts); Nest's own start-up lines are debug (json-logger.ts). */
export function startLine(config: ServerConfig, address: AddressInfo, env: Record<string, string | undefined>): Record<string, unknown> {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const mode = env.NODE_ENV === 'production' ? 'production' : 'development';
  const database = config.databaseUrl ? 'postgres' : 'sqlite';
  const databaseAt = config.databaseUrl ? describeDatabaseUrl(config.databaseUrl) : config.databasePath;
  const webhook = config.telegram.webhook;
  const bot = !config.telegram.token ? 'none' : webhook ? 'webhook' : 'polling';
  const botText = webhook ? `bot by webhook ${webhook.url}` : bot === 'polling' ? 'bot by polling' : 'no bot (TELEGRAM_BOT_TOKEN empty)';
  const leadsApi = config.leads.enabled ? 'on' : 'off';
  return {
    msg: `leads server listening on http://${host}:${address.port} (database ${databaseAt}) · ${mode} · ${database} · ${botText} · POST /leads ${leadsApi}`,
    mode,
    database,
    database_at: databaseAt,
    host: address.address,
    port: address.port,
    bot,
    leads_api: leadsApi,
  };
}
