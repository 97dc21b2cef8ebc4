/**
 * The route's action, called with a real Request (Epic Stack style), against a real HTTP server standing in for
 * POST /leads and the Telegram sandbox: each row of the status mapping in docs/requirements.md §8.3.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetEnv, getEnv } from '~/env.server';
import { signStartedAt } from '~/leads/started-at.server';
import { action, loader } from '~/routes/_index';

const LEADS_CHAT = -1001000000001;
let sandbox: TelegramSandbox;
let stub: Server;
let stubUrl = '';
let answer: { status: number; body?: unknown; hang?: boolean } = { status: 201 };
const received: { headers: Record<string, unknown>; body: any }[] = [];
let logs: string[] = [];
let ipCounter = 0;

function setEnv(env: Record<string, string | undefined>) {
  const keys = ['LEADS_ENDPOINT', 'LEADS_SECRET', 'TELEGRAM_BOT_TOKEN', 'TELEGRAM_API_ROOT', 'LEADS_CHAT_ID', 'MIN_FILL_MS', 'TRUST_PROXY'];
  for (const k of keys) delete process.env[k];
  for (const [k, v] of Object.entries(env)) if (v !== undefined) process.env[k] = v;
  resetEnv();
}

const fullEnv = () => ({
  LEADS_ENDPOINT: `${stubUrl}/leads`,
  LEADS_SECRET: 'landing-test-secret-123',
  TELEGRAM_BOT_TOKEN: sandbox.token,
  TELEGRAM_API_ROOT: sandbox.url,
  LEADS_CHAT_ID: String(LEADS_CHAT),
  MIN_FILL_MS: '3000',
  // The requests below come through one proxy that appends the visitor's address to X-Forwarded-For.
  TRUST_PROXY: '1',
});

async function submit(fields: Record<string, string> = {}) {
  const requestId = crypto.randomUUID();
  const form = new URLSearchParams({
    name: 'Анна Ким',
    telegram: 't.me/anna_k',
    phone: '+7 999 123-45-67',
    date: '14 февраля',
    guests: '30',
    comment: 'Свадьба',
    company: '',
    startedAt: signStartedAt(Date.now() - 4000, fields.requestId ?? requestId, getEnv().signingKey),
    requestId,
    ...fields,
  });
  const request = new Request('http://landing.test/?index', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': `198.51.100.${++ipCounter}` },
    body: form,
  });
  const response = (await action({ request, context: { clientAddress: '127.0.0.1' }, params: {} })) as {
    data: any;
    init?: { headers?: Record<string, string> };
  };
  return { requestId: form.get('requestId')!, result: response.data, headers: response.init?.headers ?? {} };
}

const fallbackMessages = () => sandbox.messages(LEADS_CHAT);
const routeOf = (requestId: string) => logs.find((l) => l.startsWith(`[request] ${requestId} → `))?.split(' → ')[1];

beforeAll(async () => {
  sandbox = await startSandbox();
  stub = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: body ? JSON.parse(body) : null });
      if (answer.hang) return; // never answers
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(answer.body ?? {}));
    });
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});
afterAll(async () => {
  stub.closeAllConnections();
  await new Promise((r) => stub.close(r));
  await sandbox.stop();
});
beforeEach(() => {
  setEnv(fullEnv());
  logs = [];
  received.length = 0;
  sandbox.state.reset();
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' ')));
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('status mapping (requirements §8.3)', () => {
  it.each([
    [201, 'server', 'sent'],
    [200, 'server', 'sent'],
    [429, 'server-throttled', 'throttled'],
    [422, 'server-rejected', 'error'],
  ])('%i → %s, visitor sees %s, no fallback', async (status, route, state) => {
    answer = { status, body: status === 422 ? { error: 'invalid', errors: { phone: 'invalid' } } : { lead_number: 1 } };
    const { requestId, result, headers } = await submit();
    expect(routeOf(requestId)).toMatch(new RegExp(`^${route}`));
    expect(result.state).toBe(state);
    expect(fallbackMessages()).toHaveLength(0);
    if (state === 'sent') {
      expect(headers['Set-Cookie']).toMatch(/^stickers_request_sent=\d+/);
      expect(result.values).toBeUndefined();
    } else {
      expect(result.values).toMatchObject({ name: 'Анна Ким', telegram: 't.me/anna_k' });
      expect(result.requestId).toBe(requestId);
    }
  });

  it('sends the normalised request with the secret header and the visitor address', async () => {
    answer = { status: 201 };
    const { requestId } = await submit();
    expect(received[0].headers['x-stickers-leads-secret']).toBe('landing-test-secret-123');
    expect(received[0].body).toEqual({
      request_id: requestId,
      name: 'Анна Ким',
      telegram: '@anna_k',
      phone: '+79991234567',
      date: '14 февраля',
      guests: '30',
      comment: 'Свадьба',
      client_ip: `198.51.100.${ipCounter}`,
    });
  });

  it.each([401, 404, 413, 500, 503, 302])(
    '%i → fallback: the exact warning message goes to the group, visitor sees sent',
    async (status) => {
      answer = { status };
      const { requestId, result } = await submit();
      expect(routeOf(requestId)).toMatch(/^fallback/);
      expect(result.state).toBe('sent');
      const [message] = fallbackMessages();
      expect(message.text).toBe(
        [
          `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${requestId})`,
          '',
          'Заявка с сайта',
          'Имя: Анна Ким',
          'Telegram: @anna_k',
          'Телефон: +79991234567',
          'Дата: 14 февраля',
          'Гостей: 30',
          'Комментарий: Свадьба',
        ].join('\n'),
      );
      expect(message.entities).toEqual([
        { type: 'text_link', offset: message.text.indexOf('@anna_k'), length: 7, url: 'https://t.me/anna_k' },
      ]);
      expect(message.reply_markup).toBeUndefined();
    },
  );

  it('a server that hangs past 5 s → fallback', async () => {
    answer = { status: 201, hang: true };
    const started = Date.now();
    const { requestId, result } = await submit();
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    expect(routeOf(requestId)).toMatch(/^fallback/);
    expect(result.state).toBe('sent');
    expect(fallbackMessages()).toHaveLength(1);
  }, 15000);

  it('a closed port (network error) → fallback', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    setEnv({ ...fullEnv(), LEADS_ENDPOINT: `http://127.0.0.1:${port}/leads` });
    const { requestId, result } = await submit();
    expect(routeOf(requestId)).toMatch(/^fallback/);
    expect(result.state).toBe('sent');
  });

  it('fallback failing too → lost: error, the form keeps its values and request id', async () => {
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    const { requestId, result } = await submit();
    expect(routeOf(requestId)).toMatch(/^lost/);
    expect(result).toMatchObject({ state: 'error', requestId, values: { name: 'Анна Ким', comment: 'Свадьба' } });
  });

  it('no server configured → direct to Telegram without the warning line', async () => {
    setEnv({ ...fullEnv(), LEADS_ENDPOINT: undefined, LEADS_SECRET: undefined });
    const { requestId, result } = await submit();
    expect(routeOf(requestId)).toBe('direct');
    expect(result.state).toBe('sent');
    expect(fallbackMessages()[0].text.startsWith('Заявка с сайта')).toBe(true);
    expect(received).toHaveLength(0);
  });

  it('nothing configured → the request is printed to the console and the visitor sees sent', async () => {
    setEnv({});
    const { requestId, result } = await submit();
    expect(routeOf(requestId)).toBe('console');
    expect(result.state).toBe('sent');
    expect(logs.some((l) => l.includes('Имя: Анна Ким'))).toBe(true);
  });
});

describe('checks before delivery', () => {
  it('a filled honeypot: quiet success, nothing sent anywhere', async () => {
    const { result } = await submit({ company: 'Bots Inc' });
    expect(result.state).toBe('sent');
    expect(received).toHaveLength(0);
    expect(fallbackMessages()).toHaveLength(0);
  });

  it('too fast or forged startedAt: quiet success, nothing sent', async () => {
    const requestId = crypto.randomUUID();
    for (const startedAt of [signStartedAt(Date.now() - 100, requestId, getEnv().signingKey), `${Date.now() - 60000}.forged`, '']) {
      const { result } = await submit({ requestId, startedAt });
      expect(result.state).toBe('sent');
    }
    expect(received).toHaveLength(0);
  });

  it('invalid fields: per-field codes, values kept, nothing sent', async () => {
    const { result } = await submit({ phone: '12', name: 'A' });
    expect(result).toMatchObject({ state: 'invalid', errors: { phone: 'invalid', name: 'too_short' }, values: { phone: '12' } });
    expect(received).toHaveLength(0);
  });

  it('logs carry no personal data outside the console route', async () => {
    answer = { status: 500 };
    const fallback = await submit();
    answer = { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } };
    const rejected = await submit();
    // Both requests were logged (with the server's answer), so the check below reads real lines.
    expect(routeOf(fallback.requestId)).toMatch(/^fallback \(500 /);
    expect(routeOf(rejected.requestId)).toMatch(/^server-rejected \(422 /);
    for (const line of logs) for (const pii of ['Анна', 'anna_k', '999', '198.51.100']) expect(line).not.toContain(pii);
  });
});

describe('loader', () => {
  it('hands the form a fresh request id and a signed start time; the sent cookie shows the sent screen', () => {
    const fresh = loader({ request: new Request('http://landing.test/'), context: {}, params: {} }) as any;
    expect(fresh.data.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.data.sent).toBe(false);
    const again = loader({
      request: new Request('http://landing.test/', { headers: { Cookie: `stickers_request_sent=${Date.now()}` } }),
      context: {},
      params: {},
    }) as any;
    expect(again.data.sent).toBe(true);
  });
});
