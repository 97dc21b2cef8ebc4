/**
 * The per-caller throttles (http/caller-throttle.ts) against the real app (both databases): POST /leads's flood guard
 * before the secret and the body, the API's throttle before the secret (refused requests count), the CSV exports, the
 * inbox API per Telegram user (per address without good launch data) and the Telegram webhook's route per address.
 * Each: 429 `{"error":"rate_limited","why":"flood"}` with a whole-second Retry-After, and another caller unaffected.
 * The windows are an hour long, so no test ever crosses one (the throttler counts on the wall clock).
 */
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { DEFAULT_USER, signInitData, type SandboxUser } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import request, { type Response } from 'supertest';
import { freePort, lead, sandboxSuite, SECRET, type TestServer } from './harness';

const { tmp, sandbox, start } = sandboxSuite();
const OTHER_USER: SandboxUser = { id: 502, is_bot: false, first_name: 'Пётр' };
const WINDOW_SEC = 3600;
const FLOOD = { error: 'rate_limited', why: 'flood' };
/** Another caller: the same machine, from another loopback address (Linux answers every 127.0.0.0/8 address). */
const OTHER_ADDRESS = '127.0.0.2';
let n = 0;

/** One request to the app from `from` (the caller's address; 127.0.0.1 unless told). */
async function call(
  server: TestServer,
  path: string,
  o: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<Response> {
  const http = request(server.app.getHttpServer());
  const test = o.method === 'POST' ? http.post(path) : http.get(path);
  if (o.from) test.agent(new Agent({ localAddress: o.from }));
  test.set(o.headers ?? {});
  if (o.body !== undefined) test.send(o.body);
  return test;
}

/** The answer is the throttle's: 429, the documented body, Retry-After whole seconds within the window. */
function expectFlood(answer: Response): void {
  expect([answer.status, answer.body]).toEqual([429, FLOOD]);
  const retryAfter = String(answer.headers['retry-after']);
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(Number(retryAfter)).toBeLessThanOrEqual(WINDOW_SEC);
}

const startWith = (env: Record<string, string>, options: { port?: number } = {}) =>
  start({ dbPath: `${tmp.dir}/throttle-${++n}.sqlite`, ...options, env: { LEADS_THROTTLE_WINDOW_SEC: String(WINDOW_SEC), ...env } });

const postLead = (server: TestServer, from?: string) =>
  call(server, '/leads', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
    body: JSON.stringify(lead()),
    from,
  });

const withSecret = { [SECRET_HEADER]: SECRET };

describe('POST /leads: the flood guard per caller address, before the secret and the body', () => {
  it('answers 429 with Retry-After over LEADS_THROTTLE_SUBMIT; another caller is still taken', async () => {
    const server = await startWith({ LEADS_THROTTLE_SUBMIT: '2' });
    expect((await postLead(server)).status).toBe(201);
    expect((await postLead(server)).status).toBe(201);
    expectFlood(await postLead(server));
    expect((await postLead(server, OTHER_ADDRESS)).status).toBe(201);
  });

  it('answers 429 to a request whose body never comes, and before the secret is looked at', async () => {
    const server = await startWith({ LEADS_THROTTLE_SUBMIT: '1' });
    expect((await postLead(server)).status).toBe(201);
    // Headers only: a Content-Length and no body at all, nor any secret. The answer arrives all the same.
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (raw += chunk));
    const head = 'POST /leads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    socket.write(head);
    const answered = await new Promise<string>((resolve) => {
      const check = () => {
        if (/\r\n\r\n[\s\S]*\}/.test(raw)) resolve(raw);
      };
      socket.on('data', check);
      socket.on('close', () => resolve(raw));
    });
    socket.destroy();
    expect(answered).toMatch(/^HTTP\/1\.1 429 /);
    expect(answered).toMatch(/\r\nRetry-After: [1-9]\d*\r\n/i);
    expect(answered.slice(answered.indexOf('\r\n\r\n') + 4)).toBe(JSON.stringify(FLOOD));
  });
});

describe('the API behind the secret: per caller address, before the secret', () => {
  it('counts requests refused as unauthorized: over LEADS_THROTTLE_API even the right secret gets 429; another caller does not', async () => {
    const server = await startWith({ LEADS_THROTTLE_API: '2' });
    expect((await call(server, '/leads')).status).toBe(401);
    expect((await call(server, '/leads', { headers: { [SECRET_HEADER]: 'wrong-secret-0123456789' } })).status).toBe(401);
    expectFlood(await call(server, '/leads', { headers: withSecret }));
    expectFlood(await call(server, '/leads/1/trace', { headers: withSecret }));
    expect((await call(server, '/leads', { headers: withSecret, from: OTHER_ADDRESS })).status).toBe(200);
  });

  it('GET /leads/export.csv: over LEADS_THROTTLE_EXPORT a 429, while the JSON list and another caller go on', async () => {
    const server = await startWith({ LEADS_THROTTLE_EXPORT: '1' });
    expect((await call(server, '/leads/export.csv', { headers: withSecret })).status).toBe(200);
    expectFlood(await call(server, '/leads/export.csv', { headers: withSecret }));
    expect((await call(server, '/leads', { headers: withSecret })).status).toBe(200);
    expect((await call(server, '/leads/export.csv', { headers: withSecret, from: OTHER_ADDRESS })).status).toBe(200);
  });
});

describe('the inbox API: per Telegram user, per address without good launch data', () => {
  const managers = { LEADS_MANAGER_IDS: `${DEFAULT_USER.id},${OTHER_USER.id}` };
  const inbox = (server: TestServer, path: string, user: SandboxUser | null = DEFAULT_USER, from?: string) =>
    call(server, `/inbox/api/${path}`, {
      headers: user
        ? { Authorization: `tma ${signInitData({ botToken: sandbox.token, user, authDate: Math.floor(server.clock.now() / 1000) })}` }
        : {},
      from,
    });

  it('over LEADS_THROTTLE_INBOX a user gets 429; another user at the same address does not', async () => {
    const server = await startWith({ ...managers, LEADS_THROTTLE_INBOX: '2' });
    expect((await inbox(server, 'me')).status).toBe(200);
    expect((await inbox(server, 'leads')).status).toBe(200);
    const flood = await inbox(server, 'me');
    expectFlood(flood);
    expect(flood.headers['cache-control']).toBe('no-store');
    expect((await inbox(server, 'me', OTHER_USER)).status).toBe(200);
  });

  it('requests without good launch data count per address: 401s, then 429; a user with launch data is let in', async () => {
    const server = await startWith({ ...managers, LEADS_THROTTLE_INBOX: '2' });
    expect((await inbox(server, 'me', null)).status).toBe(401);
    expect((await inbox(server, 'me', null)).status).toBe(401);
    expectFlood(await inbox(server, 'me', null));
    expect((await inbox(server, 'me', null, OTHER_ADDRESS)).status).toBe(401);
    expect((await inbox(server, 'me')).status).toBe(200);
  });

  it("the inbox's CSV: over LEADS_THROTTLE_EXPORT a 429 for that user; their other calls and another user's CSV go on", async () => {
    const server = await startWith({ ...managers, LEADS_THROTTLE_EXPORT: '1' });
    expect((await inbox(server, 'leads.csv')).status).toBe(200);
    expectFlood(await inbox(server, 'leads.csv'));
    expect((await inbox(server, 'leads')).status).toBe(200);
    expect((await inbox(server, 'leads.csv', OTHER_USER)).status).toBe(200);
  });
});

describe("the Telegram webhook's route: per caller address, before its secret", () => {
  it('over LEADS_THROTTLE_WEBHOOK a 429 with Retry-After; another address still reaches the secret check', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/webhook`;
    const server = await startWith(
      { LEADS_THROTTLE_WEBHOOK: '2', TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-0123456789_abc-XYZ' },
      { port },
    );
    const post = (from?: string) =>
      call(server, '/telegram/webhook', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"update_id":1}', from });
    expect((await post()).status).toBe(401);
    expect((await post()).status).toBe(401);
    expectFlood(await post());
    expect((await post(OTHER_ADDRESS)).status).toBe(401);
  });
});

describe('the OpenAPI document', () => {
  it("lists the throttle's 429 (why flood, Retry-After) on every throttled route", async () => {
    const server = await startWith({});
    const doc = (await call(server, '/openapi.json')).body;
    const routes: [string, string][] = [
      ['/leads', 'post'],
      ['/leads', 'get'],
      ['/leads/export.csv', 'get'],
      ['/leads/{request_id}/trace', 'get'],
      ['/inbox/api/me', 'get'],
      ['/inbox/api/leads', 'get'],
      ['/inbox/api/leads.csv', 'get'],
      ['/inbox/api/leads/{number}', 'get'],
      ['/inbox/api/charts', 'get'],
      ['/inbox/api/leads/{number}/status', 'post'],
      ['/inbox/api/leads/{number}/erase', 'post'],
    ];
    for (const [path, method] of routes) {
      const refusal = doc.paths[path][method].responses['429'];
      expect([path, method, Object.keys(refusal.headers ?? {})]).toEqual([path, method, ['Retry-After']]);
      const schema = refusal.content['application/json'].schema;
      expect([path, method, schema.properties.why.enum]).toEqual([path, method, expect.arrayContaining(['flood'])]);
    }
  });
});
