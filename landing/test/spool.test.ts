/**
 * The form's action and the spool, with real Requests, a real HTTP stand-in for POST /leads, the Telegram
 * sandbox and a real spool directory: which routes are written to disk before the action answers, what the entry
 * holds, a resubmission, and a spool that cannot be written (the visitor sees the same).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getEnv, loadLandingEnv } from '~/env.server';
import { fallbackSignature } from '~/leads/fallback-signature.server';
import { SpoolReplayer } from '~/leads/spool-replay.server';
import type { SpoolEntry } from '~/leads/spool.server';
import { postForm } from './post-form';
import {
  ENV_KEYS,
  LEADS_CHAT,
  captureConsole,
  closedPort,
  configuredEnv,
  setEnv as setLandingEnv,
  standIns,
  type StandInAnswer,
} from './support';

const SPOOL_ENV_KEYS = [...ENV_KEYS, 'LANDING_SPOOL_DIR', 'LANDING_SPOOL_MAX_AGE_DAYS', 'LANDING_SPOOL_REJECTED_DAYS', 'ADMIN_CHAT_ID'];
const spoolDirBefore = process.env.LANDING_SPOOL_DIR;

let answer: StandInAnswer = { status: 201 };
const received: any[] = [];
let logs: string[] = [];
let errors: string[] = [];
let root = '';
let dir = '';
let visitor = 0;
const { sandbox, leads } = standIns(({ body }) => {
  received.push(body);
  return answer;
});

const setEnv = (env: Record<string, string | undefined>) => setLandingEnv(env, SPOOL_ENV_KEYS);
const fullEnv = (over: Record<string, string | undefined> = {}) =>
  configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', LANDING_SPOOL_DIR: dir, ...over });

const VISITOR = { name: 'Анна Ким', telegram: 't.me/anna_k', phone: '+7 999 123-45-67', comment: 'Свадьба' };
async function submit(requestId: string = crypto.randomUUID(), fields: Record<string, string> = {}) {
  const ip = `198.51.100.${++visitor}`;
  const { result, before } = await postForm({ values: VISITOR, fields, requestId, forwardedFor: ip });
  return { requestId, result, before, ip };
}

const entryFiles = () => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
const entryOf = (requestId: string) => {
  const name = entryFiles().find((n) => n.endsWith(`-${requestId}.json`));
  return name ? { name, entry: JSON.parse(readFileSync(join(dir, name), 'utf8')) as SpoolEntry } : null;
};

afterAll(() => {
  setEnv({ LANDING_SPOOL_DIR: spoolDirBefore });
});
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'spool-action-'));
  dir = join(root, 'spool');
  setEnv(fullEnv());
  answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
  received.length = 0;
  logs = captureConsole('log');
  errors = captureConsole('error');
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(root, { recursive: true, force: true });
});

describe('written before the action answers, on every route that did not reach the database', () => {
  it('fallback (503): the entry holds the request, the route, the reason and the fallback message; mode 0600', async () => {
    answer = { status: 503 };
    const { requestId, result, before, ip } = await submit();
    expect(result.state).toBe('sent');
    const found = entryOf(requestId);
    expect(found).not.toBeNull();
    const { name, entry } = found!;
    const [message] = sandbox.messages(LEADS_CHAT);
    expect(message.text.startsWith('⚠️ Запасной канал')).toBe(true);
    expect(entry).toMatchObject({
      version: 1,
      request_id: requestId,
      route: 'fallback',
      reason: '503',
      fallback: { chat_id: String(LEADS_CHAT), message_id: message.message_id },
      body: {
        request_id: requestId,
        name: 'Анна Ким',
        telegram: '@anna_k',
        phone: '+79991234567',
        comment: 'Свадьба',
        client_ip: ip,
      },
      attempts: 0,
      revision: 1,
    });
    // The body is exactly what the server was sent.
    expect(entry.body).toEqual(received[0]);
    const submitted = Date.parse(entry.submitted_at);
    expect(submitted).toBeGreaterThanOrEqual(before);
    expect(name).toBe(`${String(submitted).padStart(13, '0')}-${requestId}.json`);
    expect(Date.parse(entry.fallback!.sent_at)).toBeGreaterThanOrEqual(submitted);
    expect(Date.parse(entry.next_attempt_at) - Date.parse(entry.updated_at)).toBe(5000);
    expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['401', { status: 401 }, 'fallback', '401'],
    ['404', { status: 404 }, 'fallback', '404'],
    ['413', { status: 413 }, 'fallback', '413'],
    ['500', { status: 500 }, 'fallback', '500'],
    ['429 why=secret', { status: 429, body: { error: 'rate_limited', why: 'secret' } }, 'fallback', '429 secret'],
    ['429 why=flood', { status: 429, body: { error: 'rate_limited', why: 'flood' } }, 'fallback', '429 flood'],
  ])('%s → an entry with its route and reason', async (_, server, route, reason) => {
    answer = server;
    const { requestId, result } = await submit();
    expect(result.state).toBe('sent');
    expect(entryOf(requestId)?.entry).toMatchObject({ route, reason });
  });

  it('lost (the server fails and Telegram too): the visitor sees the error as today; the entry has no fallback', async () => {
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    const { requestId, result } = await submit();
    expect(result).toMatchObject({ state: 'error', requestId, values: { name: 'Анна Ким' } });
    const { entry } = entryOf(requestId)!;
    expect(entry).toMatchObject({ route: 'lost', reason: '500' });
    expect(entry).not.toHaveProperty('fallback');
  });

  it('a closed port: reason network', async () => {
    const port = await closedPort();
    setEnv(fullEnv({ LEADS_ENDPOINT: `http://127.0.0.1:${port}/leads` }));
    const { requestId } = await submit();
    expect(entryOf(requestId)?.entry).toMatchObject({ route: 'fallback', reason: 'network' });
  });

  it('a server that hangs past 5 s: reason timeout', async () => {
    answer = { status: 201, hang: true };
    const { requestId } = await submit();
    expect(entryOf(requestId)?.entry).toMatchObject({ route: 'fallback', reason: 'timeout' });
  }, 15_000);
});

describe('not written', () => {
  it.each([
    ['201', { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } }, 'sent'],
    ['200', { status: 200, body: { lead_number: 1, duplicate: true, repeat: false } }, 'sent'],
    ['422', { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } }, 'error'],
    ['429 why=visitor', { status: 429, body: { error: 'rate_limited', why: 'visitor' } }, 'throttled'],
    ['429 why=hourly', { status: 429, body: { error: 'rate_limited', why: 'hourly' } }, 'throttled'],
  ])('%s', async (_, server, state) => {
    answer = server;
    const { result } = await submit();
    expect(result.state).toBe(state);
    expect(received).toHaveLength(1);
    expect(entryFiles()).toEqual([]);
  });

  it('bots, invalid fields: nothing is delivered, nothing spooled', async () => {
    answer = { status: 503 };
    await submit(crypto.randomUUID(), { company: 'Bots Inc' });
    await submit(crypto.randomUUID(), { startedAt: `${Date.now() - 60000}.forged` });
    expect((await submit(crypto.randomUUID(), { phone: '12' })).result.state).toBe('invalid');
    expect(received).toHaveLength(0);
    expect(entryFiles()).toEqual([]);
  });

  it('no server configured (direct, console): no spool at all, not even its directory', async () => {
    setEnv(fullEnv({ LEADS_ENDPOINT: undefined, LEADS_SECRET: undefined }));
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    expect((await submit()).result.state).toBe('error');
    setEnv(fullEnv({ LEADS_ENDPOINT: undefined, LEADS_SECRET: undefined, TELEGRAM_BOT_TOKEN: undefined, LEADS_CHAT_ID: undefined }));
    expect((await submit()).result.state).toBe('sent');
    expect(readdirSync(root)).toEqual([]);
    expect(getEnv().spool).toBeNull();
  });
});

describe('the same request sent again', () => {
  it('after lost, again through the fallback: one entry, the first submitted_at, the newest route and fallback', async () => {
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    const first = await submit();
    expect(first.result.state).toBe('error');
    const before = entryOf(first.requestId)!.entry;
    answer = { status: 503 };
    const again = await submit(first.requestId, { startedAt: first.result.startedAt, comment: 'Свадьба, 40 гостей' });
    expect(again.result.state).toBe('sent');
    expect(entryFiles()).toHaveLength(1);
    const [message] = sandbox.messages(LEADS_CHAT);
    expect(entryOf(first.requestId)!.entry).toMatchObject({
      submitted_at: before.submitted_at,
      route: 'fallback',
      reason: '503',
      fallback: { chat_id: String(LEADS_CHAT), message_id: message.message_id },
      body: { comment: 'Свадьба, 40 гостей' },
      revision: 2,
    });
  });

  it('after lost, delivered by the server this time: the entry is removed', async () => {
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    const first = await submit();
    expect(entryFiles()).toHaveLength(1);
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    expect((await submit(first.requestId, { startedAt: first.result.startedAt })).result.state).toBe('sent');
    expect(entryFiles()).toEqual([]);
  });

  it('after a fallback, failing again (a reload of the sent page): no second fallback message, the first one kept', async () => {
    answer = { status: 503 };
    const first = await submit();
    const again = await submit(first.requestId);
    expect(again.result.state).toBe('sent');
    expect(received.filter((r) => r.request_id === first.requestId)).toHaveLength(2);
    const messages = sandbox.messages(LEADS_CHAT);
    expect(messages).toHaveLength(1);
    expect(entryOf(first.requestId)!.entry.fallback).toMatchObject({ message_id: messages[0].message_id });
  });

  it('posted twice at once while the server fails (a double submit): one delivery, one fallback message', async () => {
    answer = { status: 503 };
    const requestId = crypto.randomUUID();
    const [a, b] = await Promise.all([submit(requestId), submit(requestId)]);
    expect([a.result.state, b.result.state]).toEqual(['sent', 'sent']);
    expect(received.filter((r) => r.request_id === requestId)).toHaveLength(1);
    expect(sandbox.messages(LEADS_CHAT)).toHaveLength(1);
  });

  it('after a fallback, delivered by the server: the entry stays, so that the server learns about the fallback message', async () => {
    answer = { status: 503 };
    const first = await submit();
    answer = { status: 200, body: { lead_number: 1, duplicate: true, repeat: false } };
    await submit(first.requestId);
    expect(entryOf(first.requestId)?.entry.fallback).toBeDefined();
  });
});

describe('from the action to the replay', () => {
  it('a fallback request is replayed with the same request_id and the late object, and its file is gone', async () => {
    answer = { status: 503 };
    const { requestId } = await submit();
    const sent = received[0];
    const [message] = sandbox.messages(LEADS_CHAT);
    answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
    const env = getEnv();
    const now = Date.now() + 5000;
    await new SpoolReplayer({
      env: { ...env, spool: env.spool!, leadsEndpoint: env.leadsEndpoint!, leadsSecret: env.leadsSecret! },
      clock: { now: () => now, sleep: () => Promise.resolve() },
    }).step();
    expect(received[1]).toEqual({
      ...sent,
      late: {
        submitted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        route: 'fallback',
        reason: '503',
        fallback: {
          chat_id: String(LEADS_CHAT),
          message_id: message.message_id,
          sent_at: expect.any(String),
          // Signed with the landing's bot token, the one the fallback message was sent with.
          sig: fallbackSignature(sandbox.token, requestId, String(LEADS_CHAT), message.message_id),
        },
      },
    });
    expect(received[1].request_id).toBe(requestId);
    expect(entryFiles()).toEqual([]);
  });
});

describe('a spool that cannot be written', () => {
  it('is logged at error level and changes nothing for the visitor (the fallback message is the only trace)', async () => {
    getEnv();
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a directory');
    answer = { status: 503 };
    const { requestId, result } = await submit();
    expect(result).toEqual({ state: 'sent', requestId });
    expect(sandbox.messages(LEADS_CHAT)).toHaveLength(1);
    expect(errors.filter((l) => l.startsWith(`[spool] ${requestId} NOT written to the spool (fallback)`))).toHaveLength(1);
    expect(logs.find((l) => l.startsWith(`[request] ${requestId} → `))).toMatch(/→ fallback \(503 /);
  });
});

describe('no personal data in the spool log lines', () => {
  it('only request ids, routes, reasons and counts', async () => {
    answer = { status: 503 };
    await submit();
    answer = { status: 500 };
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    await submit();
    const spoolLines = logs.filter((l) => l.startsWith('[spool]'));
    expect(spoolLines.length).toBeGreaterThanOrEqual(4);
    for (const line of [...logs, ...errors])
      for (const pii of ['Анна', 'anna_k', '999 123-45-67', '9991234567', '198.51.100']) expect(line).not.toContain(pii);
  });
});

describe('configuration', () => {
  const problemsOf = (env: Record<string, string>, checkSpoolDir = false) => {
    try {
      loadLandingEnv(env, { checkSpoolDir });
      return [];
    } catch (err) {
      return (err as { problems: string[] }).problems;
    }
  };
  const server = { LEADS_ENDPOINT: 'http://127.0.0.1:3000/leads', LEADS_SECRET: 's' };

  it('defaults: ./data/landing-spool under the working directory, 7 days, rejected/ kept 14 days, no admin chat', () => {
    const env = loadLandingEnv(server);
    expect(env.spool).toEqual({
      dir: join(process.cwd(), 'data/landing-spool'),
      maxAgeMs: 7 * 24 * 60 * 60 * 1000,
      rejectedMaxAgeMs: 14 * 24 * 60 * 60 * 1000,
    });
    expect(env.adminChatId).toBeNull();
    expect(loadLandingEnv({}).spool).toBeNull();
  });

  it('LANDING_SPOOL_MAX_AGE_DAYS and LANDING_SPOOL_REJECTED_DAYS positive numbers; ADMIN_CHAT_ID a chat id; one line each', () => {
    expect(loadLandingEnv({ ...server, LANDING_SPOOL_MAX_AGE_DAYS: '0.5' }).spool?.maxAgeMs).toBe(12 * 60 * 60 * 1000);
    expect(problemsOf({ ...server, LANDING_SPOOL_MAX_AGE_DAYS: '30' })).toEqual([]);
    for (const bad of ['0', '-1', 'week', '1e3', '30.5']) {
      expect(problemsOf({ ...server, LANDING_SPOOL_MAX_AGE_DAYS: bad })).toEqual([
        `LANDING_SPOOL_MAX_AGE_DAYS must be a positive number of days, up to 30 (got "${bad}")`,
      ]);
    }
    expect(loadLandingEnv({ ...server, LANDING_SPOOL_REJECTED_DAYS: '1.5' }).spool?.rejectedMaxAgeMs).toBe(36 * 60 * 60 * 1000);
    expect(problemsOf({ ...server, LANDING_SPOOL_REJECTED_DAYS: '30' })).toEqual([]);
    for (const bad of ['0', '-1', 'month', '31', '1e3']) {
      expect(problemsOf({ ...server, LANDING_SPOOL_REJECTED_DAYS: bad })).toEqual([
        `LANDING_SPOOL_REJECTED_DAYS must be a positive number of days, up to 30 (got "${bad}")`,
      ]);
    }
    expect(problemsOf({ ...server, ADMIN_CHAT_ID: 'admins' })).toEqual([
      'ADMIN_CHAT_ID must be a numeric chat id like -1001234567890 (got "admins")',
    ]);
  });

  it('LANDING_SPOOL_DIR is created with mode 0700 at start, or the start is refused with one line', () => {
    const spoolDir = join(root, 'deep', 'spool');
    expect(problemsOf({ ...server, LANDING_SPOOL_DIR: spoolDir }, true)).toEqual([]);
    expect(statSync(spoolDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(spoolDir, 'rejected')).mode & 0o777).toBe(0o700);
    // An existing directory open to others is closed.
    chmodSync(spoolDir, 0o755);
    expect(problemsOf({ ...server, LANDING_SPOOL_DIR: spoolDir }, true)).toEqual([]);
    expect(statSync(spoolDir).mode & 0o777).toBe(0o700);
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    expect(problemsOf({ ...server, LANDING_SPOOL_DIR: join(file, 'spool') }, true)).toEqual([
      `LANDING_SPOOL_DIR must be a directory the landing can create and write (got "${join(file, 'spool')}": ENOTDIR)`,
    ]);
    // Without a server there is no spool: nothing to check.
    expect(problemsOf({ LANDING_SPOOL_DIR: join(file, 'spool') }, true)).toEqual([]);
  });
});
