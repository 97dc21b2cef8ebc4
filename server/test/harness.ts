import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DEFAULT_CHATS, DEFAULT_USER, TelegramSandbox, type SandboxUser } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/app';
import { Clock, SCHEDULED_JOBS } from '../src/clock/clock';
import { loadServerConfig, type ServerConfig } from '../src/config/config';
import { DatabaseHandle } from '../src/database/database.module';
import { Metrics } from '../src/observability/metrics';
import { OutboxService } from '../src/outbox/outbox.service';
import { BOT_POLLING, BOT_RETRY_DEFAULT_MS, BOT_RETRY_MS } from '../src/bot/bot.launcher';
import { AlertsService } from '../src/alerts/alerts.service';
import { DEFAULT_LEASE_TIMINGS, LEASE_TIMINGS, type LeaseTimings } from '../src/cluster/lease.service';
import { migratedSqliteAt, onPostgres, postgresDatabaseFor } from './support/test-database';

export const SECRET = 'test-secret-0123456789abcdef';
export const SALT = 'test-salt-for-ip-hashes';
export const LEADS_CHAT = DEFAULT_CHATS[0].id;
export const ADMIN_CHAT = DEFAULT_CHATS[1].id;
/** Rate limits no test reaches unless it sets its own. */
/** A `POST /leads` answer's `telegram_link` from the sandbox's bot: a fresh random start parameter each answer. */
export const TELEGRAM_LINK: unknown = expect.stringMatching(/^https:\/\/t\.me\/stickers_leads_bot\?start=[A-Za-z0-9_-]{32}$/);
export const NO_RATE_LIMITS = { LEADS_HOURLY_LIMIT: '100000', LEADS_IP_LIMIT: '100000' };
/**
 * Per-caller throttles no test reaches unless it sets its own (every test calls from one address, as one user): part of
 * every test's environment, beneath the test's own `env`.
 */
export const NO_THROTTLES = {
  LEADS_THROTTLE_SUBMIT: '1000000',
  LEADS_THROTTLE_API: '1000000',
  LEADS_THROTTLE_EXPORT: '1000000',
  LEADS_THROTTLE_INBOX: '1000000',
  LEADS_THROTTLE_WEBHOOK: '1000000',
};
/** An hourly limit no test reaches; the per-visitor limit as configured (for the tests of `POST /leads`). */
export const NO_HOURLY_LIMIT = { LEADS_HOURLY_LIMIT: '100000' };

/** A clock the test moves by hand. Starts at 2026-11-29 09:00 UTC. */
export class FakeClock extends Clock {
  constructor(public t = Date.UTC(2026, 10, 29, 9, 0, 0)) {
    super();
  }
  override now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Keeps every log line, so tests can assert what was (and was not) logged. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private push(level: string, message: unknown, rest: unknown[]) {
    this.lines.push(`${level} ${[message, ...rest].map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ')}`);
  }
  log(message: unknown, ...rest: unknown[]) {
    this.push('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.push('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.push('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.push('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.push('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.push('fatal', message, rest);
  }
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'leads-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestServer {
  app: INestApplication;
  url: string;
  config: ServerConfig;
  clock: FakeClock;
  logger: CapturingLogger;
  db: DatabaseHandle;
  outbox: OutboxService;
  close(): Promise<void>;
}

export interface StartOptions {
  dbPath: string;
  env?: Record<string, string>;
  clock?: FakeClock;
  sandbox?: TelegramSandbox;
  logger?: CapturingLogger;
  /** Run the outbox interval as production does. Off by default: tests call `outbox.tick()` with a fake clock. */
  scheduled?: boolean;
  /** Poll the sandbox for updates (button presses, commands). Off by default. */
  polling?: boolean;
  /** The bot launcher's delay between tries to start polling. Production's by default. */
  botRetryMs?: number;
  /** The HTTP port (0: any free one), e.g. for a webhook URL that must be known before the start. */
  port?: number;
  /** How long leases of once-at-a-time jobs last and how often they are renewed. Production's by default. */
  leaseTimings?: LeaseTimings;
}

export function testEnv(options: StartOptions): Record<string, string> {
  return {
    DATABASE_PATH: options.dbPath,
    LEADS_SECRET: SECRET,
    LEADS_IP_SALT: SALT,
    ...NO_THROTTLES,
    ...(options.sandbox
      ? {
          TELEGRAM_BOT_TOKEN: options.sandbox.token,
          TELEGRAM_API_ROOT: options.sandbox.url,
          LEADS_CHAT_ID: String(LEADS_CHAT),
          ADMIN_CHAT_ID: String(ADMIN_CHAT),
          TELEGRAM_TIMEOUT_MS: '500',
        }
      : {}),
    ...options.env,
  };
}

/**
 * The real app (every module, real SQLite file — or, with LEADS_TEST_DATABASE=postgres, a real PostgreSQL database
 * that stands for that file — real HTTP on loopback) with a fake clock.
 */
export async function startServer(options: StartOptions): Promise<TestServer> {
  const env = testEnv(options);
  if (onPostgres && !env.DATABASE_URL) env.DATABASE_URL = await postgresDatabaseFor(options.dbPath, { migrated: true });
  const config = loadServerConfig(env);
  if (!config.databaseUrl) await migratedSqliteAt(config.databasePath);
  const clock = options.clock ?? new FakeClock();
  const logger = options.logger ?? new CapturingLogger();
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config)] })
    .overrideProvider(Clock)
    .useValue(clock)
    .overrideProvider(SCHEDULED_JOBS)
    .useValue(options.scheduled ?? false)
    .overrideProvider(BOT_POLLING)
    .useValue(options.polling ?? false)
    .overrideProvider(BOT_RETRY_MS)
    .useValue(options.botRetryMs ?? BOT_RETRY_DEFAULT_MS)
    .overrideProvider(LEASE_TIMINGS)
    .useValue(options.leaseTimings ?? DEFAULT_LEASE_TIMINGS)
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger });
  configureApp(app);
  await app.listen(options.port ?? 0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  let closed: Promise<void> | null = null;
  const close = () => (closed ??= app.close());
  return { app, url, config, clock, logger, db: app.get(DatabaseHandle), outbox: app.get(OutboxService), close };
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** `POST /leads` through supertest, with the secret unless `headers` says otherwise; the body parsed when it is JSON. */
export async function postLead(server: { url: string }, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(server.url)
    .post('/leads')
    .set({ 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET, ...headers })
    .send(typeof body === 'string' ? body : JSON.stringify(body))
    .ok(() => true);
  let parsed: unknown = res.text;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    /* keep text */
  }
  const answered = new Headers();
  for (const [name, value] of Object.entries(res.headers as Record<string, string | string[]>)) {
    for (const one of Array.isArray(value) ? value : [value]) answered.append(name, one);
  }
  return { status: res.status, body: parsed, headers: answered };
}

/** Posts a lead and waits until the publish attempt it triggers is over. */
export async function publishLead(server: TestServer, overrides: Record<string, unknown> = {}): Promise<Answer> {
  const res = await postLead(server, lead(overrides));
  await server.outbox.whenIdle();
  return res;
}

/** Posts a lead that must be stored (200 or 201), waits until the publish attempt it triggers is over; its number. */
export async function submitLead(server: TestServer, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await postLead(server, lead(overrides));
  expect([200, 201]).toContain(res.status);
  await server.outbox.whenIdle();
  return res.body.lead_number as number;
}

/** Moves the server's clock on by `ms`, then runs one outbox pass. */
export async function advanceAndTick(server: TestServer, ms: number): Promise<void> {
  server.clock.advance(ms);
  await server.outbox.tick();
}

let counter = 0;
/** A valid lead with a fresh request_id and a contact nobody else uses. */
export function lead(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  const n = String(counter).padStart(4, '0');
  return {
    request_id: crypto.randomUUID(),
    name: 'Анна Ким',
    telegram: `@anna_${n}_${process.pid % 1000}`,
    phone: `+7999${String(process.pid % 1000).padStart(3, '0')}${n}`,
    date: '14 февраля',
    guests: '30',
    comment: 'Стикеры для свадьбы',
    // An address of its own (10.x.y.z, never reused in a worker, whose files share the counter): a test that picks an
    // address takes one of the documentation ranges (192.0.2.x, 198.51.100.x, 203.0.113.x), so no default lead shares it.
    client_ip: `10.${(counter >> 16) & 255}.${(counter >> 8) & 255}.${counter & 255}`,
    ...overrides,
  };
}

/**
 * How much longer than its stated bound a wait may take before it fails: the bounds say how long the event takes on a
 * quiet machine, and a test only waits for an event, never asserts a time, so a loaded machine (CI beside other work,
 * two suites at once) must not turn a slow start into a failure. LEADS_TEST_WAIT_SCALE overrides it.
 */
const WAIT_SCALE = Number(process.env.LEADS_TEST_WAIT_SCALE ?? 3);

export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs * WAIT_SCALE;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A counter's value in the app's registry, as GET /metrics shows it (0: not counted yet). */
export async function counterValue(server: { app: INestApplication }, name: string, labels: Record<string, string>): Promise<number> {
  const counter = await server.app.get(Metrics).registry.getSingleMetric(name)?.get();
  return counter?.values.find((v) => isDeepStrictEqual(v.labels, labels))?.value ?? 0;
}

/**
 * The lifecycle shared by suites that run the app against one Telegram sandbox: a temp dir and a sandbox per file;
 * after each test the server it started is closed first (its last outbox pass finishes), then the sandbox is reset.
 * `start` is `startServer` with this sandbox (pass `sandbox: undefined` for an app without Telegram). `boot` is `start`
 * on a fresh database file with no rate limit a test reaches (unless it sets `limits` or `env`), and with `polling` it
 * waits until the bot has launched: the start most tests share.
 */
export function sandboxSuite(prepare?: (sandbox: TelegramSandbox) => void) {
  const tmp = tempDir();
  const sandbox = new TelegramSandbox();
  prepare?.(sandbox);
  let current: TestServer | undefined;
  beforeAll(() => sandbox.start());
  afterAll(async () => {
    await sandbox.stop();
    tmp.remove();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
    sandbox.releaseHanging();
    sandbox.state.reset();
  });
  const start = async (options: Omit<StartOptions, 'sandbox'> & { sandbox?: TelegramSandbox }): Promise<TestServer> => {
    current = await startServer({ sandbox, ...options });
    return current;
  };
  let files = 0;
  const boot = async ({ dbPath, limits = NO_RATE_LIMITS, env, ...options }: BootOptions = {}): Promise<TestServer> => {
    const server = await start({ ...options, dbPath: dbPath ?? join(tmp.dir, `app-${(files += 1)}.sqlite`), env: { ...limits, ...env } });
    if (options.polling) await botLaunched(sandbox);
    return server;
  };
  return { tmp, sandbox, start, boot };
}

/** What `boot` of a `sandboxSuite` takes: `startServer`'s options, each with the suite's default. */
export interface BootOptions extends Omit<StartOptions, 'dbPath' | 'sandbox'> {
  /** The database file: a fresh one in the suite's temp dir by default. */
  dbPath?: string;
  /** The Telegram the app talks to: the suite's sandbox by default, `undefined` for an app without Telegram. */
  sandbox?: TelegramSandbox;
  /** The rate limits beneath `env`: `NO_RATE_LIMITS` by default. */
  limits?: Record<string, string>;
}

/**
 * Watches every alert the app decides on from now: the returned function waits until each decision is made and says
 * what it came to (`sent`, `throttled`, `failed`, …). Tests count alerts after that, never after a sleep.
 */
export function watchAlerts(server: { app: INestApplication }): () => Promise<{ key: string; result: string }[]> {
  const spy = jest.spyOn(server.app.get(AlertsService), 'sendThrottled');
  return async () =>
    Promise.all(spy.mock.calls.map(async ([key], i) => ({ key, result: await (spy.mock.results[i].value as Promise<string>) })));
}

/** Waits until the bot has launched (it sets its commands at launch, the last of its calls then). */
export function botLaunched(sandbox: TelegramSandbox): Promise<boolean> {
  return waitFor(() => sandbox.callsOf('setMyCommands').some((c) => c.status === 200), 5000, 'setMyCommands at launch');
}

/** What a member does in the sandbox's chats; each resolves with what the bot answered. */
export function memberActions(sandbox: TelegramSandbox) {
  return {
    /** Presses a button as a member and waits for the bot's answer to that press. */
    press: async (chatId: number, messageId: number, data: string, from: SandboxUser = DEFAULT_USER): Promise<string> => {
      const id = sandbox.press(chatId, messageId, data, from);
      const answer = await waitFor(() => sandbox.state.callbackAnswers.find((a) => a.callback_query_id === id), 5000, `answer to ${data}`);
      return answer.text ?? '';
    },
    /** Sends a command as a member and waits for the bot's reply to it. */
    command: async (chatId: number, text: string, from: SandboxUser = DEFAULT_USER): Promise<string> => {
      const messageId = sandbox.say(chatId, text, from);
      const reply = await waitFor(
        () => sandbox.messages(chatId).find((m) => m.reply_to_message_id === messageId && m.from.is_bot),
        5000,
        `reply to ${text}`,
      );
      return reply.text;
    },
  };
}

/** Calls the sandbox's Bot API with the bot's token, as the app would (for a message the app did not send); its `result`. */
export async function callBotApi<T>(sandbox: TelegramSandbox, method: string, params: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return ((await res.json()) as { result: T }).result;
}

/** A port that is free now (for a URL the app must know before it listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
