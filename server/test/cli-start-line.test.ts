/**
 * The server's start (main.ts): one line that says what this process is — where it listens, the mode, the database,
 * how the bot gets updates, whether POST /leads is on — while Nest's own ~40 start-up lines (one per module and per
 * route) are debug.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Logger, type INestApplication } from '@nestjs/common';
import { startFromEnv, startLine } from '../src/app';
import { ConfigError } from '../src/config/config';
import { JsonLogger, type JsonLevel } from '../src/observability/json-logger';
import { CapturingLogger, SALT, SECRET, tempDir } from './harness';
import { onPostgres, postgresDatabaseFor } from './support/test-database';

const tmp = tempDir();
afterAll(() => tmp.remove());
const NEST_STARTUP = ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'];

async function start(level: JsonLevel, env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const dbPath = join(tmp.dir, `start-${level}-${Object.keys(env).length}.sqlite`);
  const full: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_PATH: dbPath,
    LEADS_SECRET: SECRET,
    LEADS_IP_SALT: SALT,
    ...env,
  };
  if (onPostgres) full.DATABASE_URL = await postgresDatabaseFor(dbPath);
  const started = await startFromEnv(full, {
    logger: () => new JsonLogger(level, (l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
  });
  new Logger('Main').log(startLine(started.config, started.address, full));
  await started.app.close();
  return { lines, port: started.address.port, dbPath };
}

describe('the start line', () => {
  it("at info: one line of the server's own, none of Nest's start-up chatter", async () => {
    const { lines, port, dbPath } = await start('info', { NODE_ENV: 'production' });
    expect(lines.filter((l) => NEST_STARTUP.includes(l.context as string))).toEqual([]);
    const main = lines.filter((l) => l.context === 'Main');
    const tail = `· production · ${onPostgres ? 'postgres' : 'sqlite'} · no bot (TELEGRAM_BOT_TOKEN empty) · POST /leads on`;
    expect(main).toEqual([
      {
        time: expect.any(String),
        level: 'info',
        context: 'Main',
        msg: onPostgres
          ? expect.stringMatching(
              new RegExp(
                `^leads server listening on http://127\\.0\\.0\\.1:${port} \\(database postgres://.*\\) · production · postgres · `,
              ),
            )
          : `leads server listening on http://127.0.0.1:${port} (database ${dbPath}) ${tail}`,
        mode: 'production',
        database: onPostgres ? 'postgres' : 'sqlite',
        database_at: onPostgres ? expect.stringMatching(/^postgres:\/\//) : dbPath,
        host: '127.0.0.1',
        port,
        bot: 'none',
        leads_api: 'on',
      },
    ]);
  });

  it('with the bot by webhook the line says so; LOG_LEVEL=debug still shows what Nest loaded', async () => {
    const { lines } = await start('debug', {
      TELEGRAM_BOT_TOKEN: '123456:abc',
      TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
      LEADS_CHAT_ID: '-100123',
      TELEGRAM_WEBHOOK_URL: 'https://leads.example.com/telegram',
      TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-0123456789',
    });
    const startup = lines.filter((l) => NEST_STARTUP.includes(l.context as string));
    expect(startup.length).toBeGreaterThan(20);
    expect(new Set(startup.map((l) => l.level))).toEqual(new Set(['debug']));
    const main = lines.find((l) => l.context === 'Main')!;
    expect(main).toMatchObject({ mode: 'development', bot: 'webhook' });
    expect(main.msg).toContain(' · development · ');
    expect(main.msg).toContain(' · bot by webhook https://leads.example.com/telegram · ');
  });
});

describe('the listen address (HOST)', () => {
  let started: INestApplication | undefined;
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });
  const dbPath = () => join(tmp.dir, 'listen.sqlite');
  const env = (extra: Record<string, string>) => ({ PORT: '0', LEADS_SECRET: SECRET, LEADS_IP_SALT: SALT, LOG_LEVEL: 'warn', ...extra });
  const logger = () => new CapturingLogger();

  it('HOST=127.0.0.1 binds loopback only; without HOST every interface, as before', async () => {
    // On PostgreSQL the app runs on the database that stands for the file, as startServer's do.
    const database: Record<string, string> = onPostgres ? { DATABASE_URL: await postgresDatabaseFor(dbPath()) } : {};
    const loopback = await startFromEnv(env({ DATABASE_PATH: dbPath(), HOST: '127.0.0.1', ...database }), { logger });
    started = loopback.app;
    expect(loopback.address.address).toBe('127.0.0.1');
    expect((await fetch(`http://127.0.0.1:${loopback.address.port}/health`)).status).toBe(200);
    await started.close();

    const every = await startFromEnv(env({ DATABASE_PATH: dbPath(), ...database }), { logger });
    started = every.app;
    expect(['::', '0.0.0.0']).toContain(every.address.address);
  });

  // main.ts prints a ConfigError as `config error: <line>`; any other failure as `server failed to start:` and a stack trace.
  it('a port in use, or a HOST that is not this machine’s: one line naming the variable, not a stack trace', async () => {
    const database: Record<string, string> = onPostgres ? { DATABASE_URL: await postgresDatabaseFor(dbPath()) } : {};
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      // At info, as production logs: the config error is the one line about it (Nest's own listen error is debug).
      const lines: { level: string; msg: string }[] = [];
      const json = () => new JsonLogger('info', (l) => lines.push(JSON.parse(l) as { level: string; msg: string }));
      const taken = startFromEnv(env({ DATABASE_PATH: dbPath(), HOST: '127.0.0.1', PORT: String(port), ...database }), { logger: json });
      await expect(taken).rejects.toBeInstanceOf(ConfigError);
      await expect(taken).rejects.toMatchObject({
        problems: [
          `PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE: another process listens there): stop it, or choose another PORT`,
        ],
      });
      expect(lines.filter((l) => l.level === 'error' || l.msg.includes('EADDRINUSE'))).toEqual([]);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // 192.0.2.1 (TEST-NET-1) is never an address of the machine.
    await expect(startFromEnv(env({ DATABASE_PATH: dbPath(), HOST: '192.0.2.1', ...database }), { logger })).rejects.toMatchObject({
      problems: ['HOST=192.0.2.1: not an address of this machine (EADDRNOTAVAIL): use one of its addresses, or leave HOST empty'],
    });
  });
});
