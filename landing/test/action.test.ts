/**
 * The route's action, called with a real Request (Epic Stack style), against a real HTTP server standing in for
 * POST /leads and the Telegram sandbox: each row of the status mapping in docs/requirements.md §8.3.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getEnv } from '~/env.server';
import { signStartedAt } from '~/leads/started-at.server';
import { loader } from '~/routes/_index';
import { postForm } from './post-form';
import {
  LEADS_CHAT,
  captureConsole,
  closedPort,
  configuredEnv,
  fallbackText,
  setEnv,
  standIns,
  type StandInAnswer,
  type StandInRequest,
} from './support';

let answer: StandInAnswer = { status: 201 };
const received: StandInRequest[] = [];
let logs: string[] = [];
let ipCounter = 0;
const { sandbox, leads } = standIns((request) => {
  received.push(request);
  return answer;
});

const fullEnv = () =>
  configuredEnv(leads.url, sandbox, {
    // The requests below come through one proxy that appends the visitor's address to X-Forwarded-For.
    TRUST_PROXY: '1',
  });

const VISITOR = {
  name: 'Анна Ким',
  telegram: 't.me/anna_k',
  phone: '+7 999 123-45-67',
  date: '14 февраля',
  guests: '30',
  comment: 'Свадьба',
};
const submit = (fields: Record<string, string> = {}) => postForm({ values: VISITOR, fields, forwardedFor: `198.51.100.${++ipCounter}` });

const fallbackMessages = () => sandbox.messages(LEADS_CHAT);
const routeOf = (requestId: string) => logs.find((l) => l.startsWith(`[request] ${requestId} → `))?.split(' → ')[1];

beforeEach(() => {
  setEnv(fullEnv());
  logs = captureConsole('log');
  received.length = 0;
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

  it.each([
    [401, 'сервер не принял секрет лендинга (LEADS_SECRET не тот, что у сервера)'],
    [404, 'сервер ответил 404 (проверьте LEADS_ENDPOINT)'],
    [413, 'сервер ответил 413'],
    [500, 'сервер ответил 500'],
    [503, 'сервер не может сохранить заявку (503)'],
    [302, 'сервер ответил 302'],
  ])('%i → fallback: the exact warning message, and why, go to the group, visitor sees sent', async (status, because) => {
    answer = { status };
    const { requestId, result } = await submit();
    expect(routeOf(requestId)).toMatch(/^fallback/);
    expect(result.state).toBe('sent');
    const [message] = fallbackMessages();
    expect(message.text).toBe(
      fallbackText(requestId, because, [
        'Имя: Анна Ким',
        'Telegram: @anna_k',
        'Телефон: +7 999 123 45 67',
        'Дата: 14 февраля',
        'Гостей: 30',
        'Комментарий: Свадьба',
      ]),
    );
    expect(message.entities).toEqual([
      { type: 'text_link', offset: message.text.indexOf('@anna_k'), length: 7, url: 'https://t.me/anna_k' },
    ]);
    expect(message.reply_markup).toBeUndefined();
  });

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
    const port = await closedPort();
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
    // The phone as typed and as sent (E.164), not a bare '999', which a random request id in the line can hold.
    for (const line of logs)
      for (const pii of ['Анна', 'anna_k', '999 123-45-67', '9991234567', '198.51.100']) expect(line).not.toContain(pii);
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

  it('/?again clears the sent memory and leads to the page without `again`, so its form does not post there', () => {
    const response = loader({
      request: new Request('http://landing.test/?again&utm_source=yandex', {
        headers: { Cookie: `stickers_request_sent=${Date.now()}` },
      }),
      context: {},
      params: {},
    }) as unknown as Response;
    expect(response.status).toBe(302);
    expect(response.headers.get('Location')).toBe('/?utm_source=yandex');
    expect(response.headers.get('Set-Cookie')).toMatch(/^stickers_request_sent=; Path=\/; Max-Age=0/);
  });
});
