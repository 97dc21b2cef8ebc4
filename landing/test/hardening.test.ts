/**
 * The landing's defences, through the route's action with real Requests, a real HTTP stand-in for POST /leads and
 * the Telegram sandbox: which address counts as the visitor, the form token's binding and age (an expired token
 * asks the visitor to send again; a pre-deploy one still works), a locked-out landing, the per-visitor limit counting
 * only delivered requests, and no console route in production.
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getEnv, loadLandingEnv } from '~/env.server';
import { deliverRequest } from '~/leads/deliver-request.server';
import { LANDING_LIMIT, resetProxyWarning } from '~/leads/rate-limit.server';
import { FORM_TOKEN_MAX_AGE_MS, signStartedAt } from '~/leads/started-at.server';
import { postForm, type FormPost } from './post-form';
import { LEADS_CHAT, captureConsole, configuredEnv, fallbackText, setEnv, standIns, type StandInAnswer } from './support';

let answer: StandInAnswer = { status: 201 };
const received: any[] = [];
let logs: string[] = [];
// Every test uses its own socket addresses, so the process-wide limiter starts empty for each.
let socketCounter = 0;
const freshSocket = () => `192.0.2.${++socketCounter}`;
const { sandbox, leads } = standIns(({ body }) => {
  received.push(body);
  return answer;
});

const fullEnv = (over: Record<string, string | undefined> = {}) => configuredEnv(leads.url, sandbox, over);

const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567' };
const post = (options: Omit<FormPost, 'values'> & { socket: string }) => postForm({ values: VISITOR, ...options });

const routeOf = (requestId: string) => logs.find((l) => l.startsWith(`[request] ${requestId} → `))?.split(' → ')[1];
const fallbackMessages = () => sandbox.messages(LEADS_CHAT);

afterAll(() => {
  setEnv({});
});
beforeEach(() => {
  setEnv(fullEnv());
  answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
  logs = captureConsole('log');
  received.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the visitor address (TRUST_PROXY)', () => {
  it('unset: a rotating X-Forwarded-For spends only the socket address quota, and client_ip is the socket address', async () => {
    const socket = freshSocket();
    const states: string[] = [];
    for (let i = 1; i <= LANDING_LIMIT + 3; i += 1) {
      states.push((await post({ socket: `::ffff:${socket}`, forwardedFor: `203.0.113.${i}` })).result.state);
    }
    expect(states).toEqual([...Array(LANDING_LIMIT).fill('sent'), 'throttled', 'throttled', 'throttled']);
    expect(received).toHaveLength(LANDING_LIMIT);
    for (const body of received) expect(body.client_ip).toBe(socket);
  });

  it('TRUST_PROXY=1: the right-most hop is the visitor; what the visitor wrote to the left of it does not count', async () => {
    setEnv(fullEnv({ TRUST_PROXY: '1' }));
    const proxy = freshSocket();
    const states: string[] = [];
    for (let i = 1; i <= LANDING_LIMIT + 1; i += 1) {
      states.push((await post({ socket: proxy, forwardedFor: `203.0.113.${i}, 198.51.100.7` })).result.state);
    }
    expect(states).toEqual([...Array(LANDING_LIMIT).fill('sent'), 'throttled']);
    expect(received.map((b) => b.client_ip)).toEqual(Array(LANDING_LIMIT).fill('198.51.100.7'));
    // Another visitor behind the same proxy has a quota of their own.
    expect((await post({ socket: proxy, forwardedFor: '198.51.100.8' })).result.state).toBe('sent');
  });

  it('unset while requests carry X-Forwarded-For: one warning per process that TRUST_PROXY may be missing', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    resetProxyWarning();
    const socket = freshSocket();
    await post({ socket });
    expect(warn).not.toHaveBeenCalled();
    await post({ socket, forwardedFor: '203.0.113.1' });
    await post({ socket, forwardedFor: '203.0.113.2' });
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringMatching(/X-Forwarded-For but TRUST_PROXY is not set/)]);
    setEnv(fullEnv({ TRUST_PROXY: '1' }));
    resetProxyWarning();
    await post({ socket, forwardedFor: '203.0.113.3' });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('TRUST_PROXY as proxy addresses: trusted hops are skipped from the right', async () => {
    setEnv(fullEnv({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }));
    await post({ socket: '127.0.0.1', forwardedFor: '203.0.113.9, 198.51.100.20, 10.1.2.3' });
    expect(received[0].client_ip).toBe('198.51.100.20');
  });

  it.each([
    ['1.2.3.4:5678', '1.2.3.4'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['unknown', undefined],
  ])('the proxy spelling %s gives client_ip %s (the request is still delivered)', async (hop, clientIp) => {
    setEnv(fullEnv({ TRUST_PROXY: '1' }));
    const { result } = await post({ socket: freshSocket(), forwardedFor: hop });
    expect(result.state).toBe('sent');
    expect(received).toHaveLength(1);
    if (clientIp) expect(received[0].client_ip).toBe(clientIp);
    else expect(received[0]).not.toHaveProperty('client_ip');
  });
});

describe('the form token', () => {
  it('reused with another request_id: refused like a fast bot (quiet "sent", nothing delivered)', async () => {
    const socket = freshSocket();
    const first = crypto.randomUUID();
    const token = signStartedAt(Date.now() - 4000, first, getEnv().signingKey);
    expect((await post({ socket, requestId: first, startedAt: token })).result.state).toBe('sent');
    const { requestId, result } = await post({ socket, requestId: crypto.randomUUID(), startedAt: token });
    expect(result).toEqual({ state: 'sent', requestId });
    expect(routeOf(requestId)).toBe('dropped (too-fast)');
    expect(received.map((b) => b.request_id)).toEqual([first]);
  });

  it('a post without the hidden requestId, or with a malformed one: delivered under the request id its token was signed for', async () => {
    const socket = freshSocket();
    const requestId = crypto.randomUUID();
    const token = signStartedAt(Date.now() - 4000, requestId, getEnv().signingKey);
    const missing = await post({ socket, requestId, startedAt: token, without: ['requestId'] });
    expect(missing.result).toEqual({ state: 'sent', requestId, leadNumber: 1 });
    const malformed = await post({ socket, requestId: 'not-a-request-id', startedAt: token });
    expect(malformed.result).toEqual({ state: 'sent', requestId, leadNumber: 1 });
    // With the field, as a page sends it: the same request. The token reused three times is one idempotent request.
    const present = await post({ socket, requestId, startedAt: token });
    expect(present.result).toEqual({ state: 'sent', requestId, leadNumber: 1 });
    expect(received.map((b) => b.request_id)).toEqual([requestId, requestId, requestId]);
    expect(logs.filter((l) => l.startsWith('[request] ') && l.includes('dropped'))).toEqual([]);
  });

  it('a post without the hidden requestId whose token is forged or missing: still a bot, nothing delivered', async () => {
    const socket = freshSocket();
    for (const startedAt of [signStartedAt(Date.now() - 4000, crypto.randomUUID(), Buffer.alloc(32, 5)), '']) {
      const { result } = await post({ socket, startedAt, without: ['requestId'] });
      expect(result.state).toBe('sent');
      expect(routeOf(result.requestId)).toBe('dropped (too-fast)');
    }
    expect(received).toEqual([]);
  });

  it('reused with its own request_id: only the same, idempotent request again', async () => {
    const socket = freshSocket();
    const requestId = crypto.randomUUID();
    const token = signStartedAt(Date.now() - 4000, requestId, getEnv().signingKey);
    await post({ socket, requestId, startedAt: token });
    await post({ socket, requestId, startedAt: token, fields: { name: 'Другое Имя' } });
    expect(received.map((b) => b.request_id)).toEqual([requestId, requestId]);
  });

  const expiredToken = (requestId: string) => signStartedAt(Date.now() - FORM_TOKEN_MAX_AGE_MS - 60_000, requestId, getEnv().signingKey);
  // What pages rendered before tokens were bound to the request id carry: the HMAC of the time alone, same key.
  const preDeployToken = (t = Date.now() - 60_000, key = getEnv().signingKey) =>
    `${t}.${createHmac('sha256', key).update(String(t)).digest('base64url')}`;

  it.each([
    ['expired (a tab left open for more than the maximum age)', expiredToken],
    ['in the old format and past the maximum age', () => preDeployToken(Date.now() - FORM_TOKEN_MAX_AGE_MS - 60_000)],
  ])('%s: not a bot; asked to send again with the values and a fresh token, then delivered once', async (_, token) => {
    setEnv(fullEnv({ MIN_FILL_MS: '60000' }));
    const socket = freshSocket();
    const requestId = crypto.randomUUID();
    const fields = { comment: 'Свадьба в июне' };
    const first = await post({ socket, requestId, startedAt: token(requestId), fields });
    expect(first.result).toEqual({
      state: 'expired',
      requestId,
      startedAt: expect.any(String),
      values: {
        name: 'Анна Ким',
        telegram: '@anna_k',
        phone: '+79991234567',
        date: '',
        guests: '',
        comment: 'Свадьба в июне',
        consent: '',
      },
    });
    expect(routeOf(requestId)).toBe('expired (asked to resend)');
    expect(received).toHaveLength(0);
    // The fresh token is bound to the same request id: useless for any other one.
    const foreign = await post({ socket, startedAt: first.result.startedAt });
    expect(foreign.result).toEqual({ state: 'sent', requestId: foreign.requestId });
    expect(routeOf(foreign.requestId)).toBe('dropped (too-fast)');
    // Sent again at once (a minimum fill time of a minute): delivered, under the same request id, once.
    const again = await post({ socket, requestId, startedAt: first.result.startedAt, fields });
    expect(again.result).toEqual({ state: 'sent', requestId, leadNumber: 1 });
    expect(received.map((b) => [b.request_id, b.comment])).toEqual([[requestId, 'Свадьба в июне']]);
  });

  it('from a page rendered before the deploy (old format, within the maximum age): delivered at once, as before the deploy', async () => {
    const requestId = crypto.randomUUID();
    const { result } = await post({ socket: freshSocket(), requestId, startedAt: preDeployToken() });
    expect(result).toEqual({ state: 'sent', requestId, leadNumber: 1 });
    expect(routeOf(requestId)).toBe('server');
    expect(received.map((b) => b.request_id)).toEqual([requestId]);
  });

  it.each([
    [
      'an expired token signed with another key',
      (id: string) => signStartedAt(Date.now() - FORM_TOKEN_MAX_AGE_MS - 60_000, id, Buffer.alloc(32, 9)),
    ],
    ['an expired token signed for another request_id', () => expiredToken(crypto.randomUUID())],
    ['an old-format token signed with another key', () => preDeployToken(Date.now() - 60_000, Buffer.alloc(32, 9))],
    ['an old-format time with a garbage signature', () => `${Date.now() - 60_000}.${'A'.repeat(43)}`],
  ])('%s: still a quiet bot drop', async (_, token) => {
    const requestId = crypto.randomUUID();
    const { result } = await post({ socket: freshSocket(), requestId, startedAt: token(requestId) });
    expect(result).toEqual({ state: 'sent', requestId });
    expect(routeOf(requestId)).toBe('dropped (too-fast)');
    expect(received).toHaveLength(0);
  });

  it("keeps its key across a restart: LEADS_SECRET's, else (direct mode) the bot token's; random only with neither", () => {
    const key = (env: Record<string, string>) => loadLandingEnv(env, { checkSpoolDir: false });
    const direct = { TELEGRAM_BOT_TOKEN: '123:abc', LEADS_CHAT_ID: '-100' };
    expect(key(direct).signingKey.equals(key(direct).signingKey)).toBe(true);
    expect(key(direct).signingKeyIsRandom).toBe(false);
    expect(key(direct).signingKey.equals(key({ ...direct, TELEGRAM_BOT_TOKEN: '123:abd' }).signingKey)).toBe(false);
    const server = { LEADS_ENDPOINT: 'http://127.0.0.1:1/leads', LEADS_SECRET: 'a-long-enough-secret' };
    expect(key(server).signingKey.equals(key({ ...server, ...direct }).signingKey)).toBe(true);
    expect(key({}).signingKeyIsRandom).toBe(true);
    expect(key({}).signingKey.equals(key({}).signingKey)).toBe(false);
  });

  it('after an error the action hands back the token, and a retry with it is delivered under the same request_id', async () => {
    const socket = freshSocket();
    answer = { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } };
    const first = await post({ socket });
    expect(first.result).toMatchObject({ state: 'error', requestId: first.requestId, startedAt: expect.any(String) });
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    const retry = await post({ socket, requestId: first.result.requestId, startedAt: first.result.startedAt });
    expect(retry.result.state).toBe('sent');
    expect(received.map((b) => b.request_id)).toEqual([first.requestId, first.requestId]);
  });
});

describe('the server locks out the landing (429, why: secret)', () => {
  it('goes to the Telegram fallback with the exact warning message', async () => {
    answer = { status: 429, body: { error: 'rate_limited', why: 'secret' } };
    const { requestId, result } = await post({ socket: freshSocket() });
    expect(result.state).toBe('sent');
    expect(routeOf(requestId)).toMatch(/^fallback \(429 /);
    expect(fallbackMessages().map((m) => m.text)).toEqual([
      fallbackText(requestId, 'сервер заблокировал адрес лендинга после неверных секретов', [
        'Имя: Анна Ким',
        'Telegram: @anna_k',
        'Телефон: +7 999 123 45 67',
      ]),
    ]);
  });

  it.each(['visitor', 'hourly'])('a 429 with why: %s is still "throttled", without fallback', async (why) => {
    answer = { status: 429, body: { error: 'rate_limited', why } };
    const { requestId, result } = await post({ socket: freshSocket() });
    expect(routeOf(requestId)).toBe('server-throttled');
    expect(result.state).toBe('throttled');
    expect(fallbackMessages()).toHaveLength(0);
  });
});

describe('the per-visitor limit counts delivered requests only', () => {
  it('5 failed deliveries, then a 6th attempt is not throttled', async () => {
    const socket = freshSocket();
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: LANDING_LIMIT });
    for (let i = 0; i < LANDING_LIMIT; i += 1) {
      const { requestId, result } = await post({ socket });
      expect(result.state).toBe('error');
      expect(routeOf(requestId)).toMatch(/^lost/);
    }
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    const { requestId, result } = await post({ socket });
    expect(result.state).toBe('sent');
    expect(routeOf(requestId)).toBe('server');
  });

  it('rejected and server-throttled requests do not count either', async () => {
    const socket = freshSocket();
    for (let i = 0; i < LANDING_LIMIT; i += 1) {
      const rejected = { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } };
      answer = i % 2 ? rejected : { status: 429, body: { error: 'rate_limited', why: 'visitor' } };
      expect((await post({ socket })).result.state).not.toBe('sent');
    }
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    expect((await post({ socket })).result.state).toBe('sent');
  });

  it('5 delivered (to the server or through the fallback), then the 6th is throttled', async () => {
    const socket = freshSocket();
    for (let i = 0; i < LANDING_LIMIT; i += 1) {
      answer = i % 2 ? { status: 503 } : { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
      expect((await post({ socket })).result.state).toBe('sent');
    }
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    const { requestId, result } = await post({ socket });
    expect(result.state).toBe('throttled');
    expect(routeOf(requestId)).toBe('throttled');
    expect(received).toHaveLength(LANDING_LIMIT);
  });
});

describe('no console route in production', () => {
  it('a production landing never prints a request, even if the configuration check were bypassed', async () => {
    const env = { ...loadLandingEnv({}), production: true };
    const lead = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', date: null, guests: null, comment: null };
    const result = await deliverRequest({ requestId: crypto.randomUUID(), lead, clientIp: '198.51.100.1' }, env);
    expect(result.route).toBe('lost');
    for (const line of logs) expect(line).not.toContain('Анна');
    const development = await deliverRequest({ requestId: crypto.randomUUID(), lead, clientIp: null }, { ...env, production: false });
    expect(development.route).toBe('console');
    expect(logs.some((l) => l.includes('Имя: Анна Ким'))).toBe(true);
  });
});
