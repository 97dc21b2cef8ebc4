/**
 * What the landing's tests share: a real HTTP stand-in for the leads server's POST /leads (started with the Telegram
 * sandbox around a file's tests), the environment the landing runs with, and the fallback message's fixed lines.
 * Not a test file: vite.config.ts collects only `*.test.ts`.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TelegramSandbox } from '@stickers/telegram-sandbox';
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import { resetEnv } from '~/env.server';

/** The sandbox's leads group. */
export const LEADS_CHAT = -1001000000001;
export const LEADS_SECRET = 'landing-test-secret-123';

/** What the stand-in answers: `status` with `body` (`{}` when none) as JSON; with `hang`, nothing at all. */
export interface StandInAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  hang?: boolean;
}

/** A request the stand-in took: its headers and its JSON body (null when empty). */
export interface StandInRequest {
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * A real HTTP server on loopback standing in for POST /leads: each request goes to `answer`, which records it as its
 * test wants and says what to answer. A hanging answer is cut by `releaseHanging()` or `stop()`.
 */
export class LeadsStandIn {
  url = '';
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();

  constructor(private readonly answer: (request: StandInRequest) => StandInAnswer | Promise<StandInAnswer>) {}

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        void (async () => {
          const answer = await this.answer({ headers: req.headers, body: body ? JSON.parse(body) : null });
          if (answer.hang) return void this.hanging.add(res);
          res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body ?? {}));
        })();
      });
    });
    this.server = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  releaseHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/**
 * The Telegram sandbox and a stand-in for POST /leads answering with `answer`: started before the file's tests, the
 * sandbox emptied before each, both stopped after.
 */
export function standIns(answer: ConstructorParameters<typeof LeadsStandIn>[0]) {
  const sandbox = new TelegramSandbox();
  const leads = new LeadsStandIn(answer);
  beforeAll(async () => {
    await sandbox.start();
    await leads.start();
  });
  beforeEach(() => {
    sandbox.state.reset();
  });
  afterAll(async () => {
    await leads.stop();
    await sandbox.stop();
  });
  return { sandbox, leads };
}

/** What the code under test prints with `console[level]` until `vi.restoreAllMocks()`: a line a call, arguments joined by spaces. */
export function captureConsole(level: 'log' | 'error'): string[] {
  const lines: string[] = [];
  vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  return lines;
}

/** The variables the landing tests set. */
export const ENV_KEYS = [
  'LEADS_ENDPOINT',
  'LEADS_SECRET',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_API_ROOT',
  'LEADS_CHAT_ID',
  'MIN_FILL_MS',
  'TRUST_PROXY',
  'LEADS_PHONE_REGION',
];

/** Clears `keys`, sets `env` (an undefined value stays unset) and has the landing read its environment again. */
export function setEnv(env: Record<string, string | undefined>, keys: readonly string[] = ENV_KEYS): void {
  for (const k of keys) delete process.env[k];
  for (const [k, v] of Object.entries(env)) if (v !== undefined) process.env[k] = v;
  resetEnv();
}

/** A landing with a leads server at `leadsUrl` and the sandbox as its Telegram fallback; `over` wins. */
export const configuredEnv = (leadsUrl: string, sandbox: TelegramSandbox, over: Record<string, string | undefined> = {}) => ({
  LEADS_ENDPOINT: `${leadsUrl}/leads`,
  LEADS_SECRET,
  TELEGRAM_BOT_TOKEN: sandbox.token,
  TELEGRAM_API_ROOT: sandbox.url,
  LEADS_CHAT_ID: String(LEADS_CHAT),
  MIN_FILL_MS: '3000',
  ...over,
});

/** The fallback message for a request the leads server did not take: the warning, why, then the request's lines. */
export const fallbackText = (requestId: string, because: string, lines: string[]) =>
  [
    `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${requestId})`,
    `Причина: ${because}`,
    '',
    'Заявка с сайта',
    ...lines,
  ].join('\n');

/** A loopback port nothing listens on (a network error for whoever connects). */
export async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  return port;
}
