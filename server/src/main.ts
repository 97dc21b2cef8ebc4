import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { startFromEnv, startLine } from './app';
import { ConfigError } from './config/config';
import { JsonLogger } from './observability/json-logger';

async function main(): Promise<void> {
  let started;
  try {
    started = await startFromEnv(process.env, { logger: (config) => new JsonLogger(config.logLevel) });
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`config error: ${problem}`);
      process.exit(1);
    }
    throw err;
  }
  const { app, config, address } = started;
  // SIGTERM/SIGINT: app.close() drains requests, lets the outbox pass finish, closes the database; then exit 0.
  let closing = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      // Nest's close hands the signal to the shutdown hooks (the drain's log line names it); its interface omits it.
      const close: (signal: string) => Promise<void> = app.close.bind(app);
      close(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(`shutdown failed: ${errorText(err)}`);
          process.exit(1);
        },
      );
    });
  }
  const main = new Logger('Main');
  main.log(startLine(config, address, process.env));
  if (!config.leads.enabled) main.warn('leads module is off (LEADS_ENABLED=0 or LEADS_SECRET empty): POST /leads answers 404');
}

main().catch((err) => {
  console.error(`server failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
