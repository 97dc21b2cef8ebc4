import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app';
import { ConfigError, loadServerConfig } from './config/config';
import { JsonLogger } from './observability/json-logger';

async function main(): Promise<void> {
  let config;
  try {
    config = loadServerConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`config error: ${problem}`);
      process.exit(1);
    }
    throw err;
  }
  const logger = new JsonLogger(config.logLevel);
  const app = await createApp(config, { logger });
  // SIGTERM/SIGINT: app.close() drains requests, lets the outbox pass finish, closes the database; then exit 0.
  let closing = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          process.exit(1);
        },
      );
    });
  }
  await app.listen(config.port);
  const main = new Logger('Main');
  main.log(`leads server listening on http://localhost:${config.port} (database ${config.databasePath})`);
  if (!config.leads.enabled) main.warn('leads module is off (LEADS_ENABLED=0 or LEADS_SECRET empty): POST /leads answers 404');
}

main().catch((err) => {
  console.error(`server failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exit(1);
});
