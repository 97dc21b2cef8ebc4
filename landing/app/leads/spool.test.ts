/**
 * The spool's replay, alerts, lock and metrics, on real files in a temporary directory, against a real HTTP
 * stand-in for POST /leads and the Telegram sandbox for the admin chat. Time is a test clock: each `step()` is one
 * pass of the loop at the clock's time, so the backoff is checked to the millisecond without waiting for it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, promises as fsp, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setEnv, standIns, type StandInAnswer, type StandInRequest } from '../../test/support';
import { fallbackSignature } from './fallback-signature.server';
import { acquireSpoolLock, LOCK_FILE, lockRefusal } from './spool-lock.server';
import { ALERT_INTERVAL_MS, realClock, SpoolReplayer, startSpoolReplay, type ReplayClock, type ReplayEnv } from './spool-replay.server';
import { entryName, spoolMetricsText, spoolShared, SpoolStore, type SpoolEntry } from './spool.server';

const ADMIN_CHAT = -1001000000002;
const T0 = Date.UTC(2026, 11, 1, 10, 15, 30, 123);
const SEC = 1000;
const MIN = 60 * SEC;
const DAY = 24 * 60 * MIN;

let answers: StandInAnswer[] = [];
let fallbackAnswer: StandInAnswer = { status: 503 };
let onRequest: ((body: any) => Promise<void>) | null = null;
const received: StandInRequest[] = [];
let logs: string[] = [];
let dir = '';
let clock: ReplayClock & { t: number };
const { sandbox, leads } = standIns(async (request) => {
  received.push(request);
  const answer = answers.shift() ?? fallbackAnswer;
  await onRequest?.(request.body);
  return answer;
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spool-unit-'));
  answers = [];
  fallbackAnswer = { status: 503 };
  onRequest = null;
  received.length = 0;
  logs = [];
  clock = { t: T0, now: () => clock.t, sleep: () => Promise.resolve() };
  for (const level of ['log', 'warn', 'error'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(`${level}: ${args.map(String).join(' ')}`));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  leads.releaseHanging();
  rmSync(dir, { recursive: true, force: true });
});

const env = (over: Partial<ReplayEnv> = {}): ReplayEnv => ({
  spool: { dir, maxAgeMs: 7 * DAY, rejectedMaxAgeMs: 14 * DAY },
  leadsEndpoint: `${leads.url}/leads`,
  leadsSecret: 'spool-test-secret-123',
  telegram: { token: sandbox.token, apiRoot: sandbox.url, chatId: '-1001000000001' },
  adminChatId: String(ADMIN_CHAT),
  ...over,
});

const body = (requestId: string) => ({
  request_id: requestId,
  name: 'Анна Ким',
  telegram: '@anna_k',
  phone: '+79991234567',
  comment: 'Свадьба',
  client_ip: '198.51.100.7',
});

/** A request the landing handled at `submittedAt` (the clock's time by default) and spooled. */
async function spooled(options: { submittedAt?: number; fallback?: boolean; requestId?: string } = {}) {
  const requestId = options.requestId ?? crypto.randomUUID();
  const submittedAt = options.submittedAt ?? clock.t;
  await new SpoolStore(dir).keep({
    requestId,
    body: body(requestId),
    submittedAt,
    route: options.fallback === false ? 'lost' : 'fallback',
    reason: '503',
    fallback:
      options.fallback === false
        ? undefined
        : { chatId: '-1001000000001', messageId: 4711, sentAt: new Date(submittedAt + 878).toISOString() },
    now: submittedAt,
  });
  return { requestId, name: entryName(submittedAt, requestId) };
}

const entries = () => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
/** The entries in rejected/ (without their `.reason` files). */
const rejected = () => readdirSync(join(dir, 'rejected')).filter((n) => n.endsWith('.json'));
const readEntry = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as SpoolEntry;
const adminMessages = () => sandbox.messages(ADMIN_CHAT);

async function waitUntil<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the replayed request', () => {
  it('is the normal body plus `late`, with the secret, to POST /leads', async () => {
    const { requestId } = await spooled();
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 201, body: { lead_number: 7, duplicate: false, repeat: false } });
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(received).toHaveLength(1);
    expect(received[0].headers['x-stickers-leads-secret']).toBe('spool-test-secret-123');
    expect(received[0].body).toEqual({
      ...body(requestId),
      late: {
        submitted_at: '2026-12-01T10:15:30.123Z',
        route: 'fallback',
        reason: '503',
        fallback: {
          chat_id: '-1001000000001',
          message_id: 4711,
          sent_at: '2026-12-01T10:15:31.001Z',
          sig: fallbackSignature(sandbox.token, requestId, '-1001000000001', 4711),
        },
      },
    });
  });

  it('the fallback claim is signed with the bot token at replay time; without a token it goes unsigned', async () => {
    const { requestId } = await spooled();
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 503 }, { status: 201 });
    const rotated = { token: '123456789:rotated-token', apiRoot: sandbox.url, chatId: '-1001000000001' };
    await new SpoolReplayer({ env: env({ telegram: rotated }), clock }).step();
    expect(received[0].body.late.fallback.sig).toBe(fallbackSignature('123456789:rotated-token', requestId, '-1001000000001', 4711));
    clock.t += 15 * SEC;
    await new SpoolReplayer({ env: env({ telegram: null }), clock }).step();
    expect(received[1].body.late.fallback).toEqual({ chat_id: '-1001000000001', message_id: 4711, sent_at: '2026-12-01T10:15:31.001Z' });
  });

  it('without a fallback message (route lost): no `fallback` in `late`', async () => {
    await spooled({ fallback: false });
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 201 });
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(received[0].body.late).toEqual({ submitted_at: '2026-12-01T10:15:30.123Z', route: 'lost', reason: '503' });
  });
});

describe('201/200: the entry is done', () => {
  it.each([201, 200])('%i → the file is deleted, one log line, counted', async (status) => {
    const { requestId, name } = await spooled();
    expect(entries()).toEqual([name]);
    const replayedBefore = spoolShared(dir).replayed;
    clock.t = T0 + 5 * SEC;
    answers.push({ status, body: { lead_number: 7, duplicate: status === 200, repeat: false } });
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(entries()).toEqual([]);
    expect(logs.filter((l) => l.includes(`${requestId} replayed → ${status}`))).toHaveLength(1);
    expect(spoolShared(dir).replayed).toBe(replayedBefore + 1);
    expect(logs).toContain('log: [spool] depth 0');
  });

  it('an entry sent again by the visitor while its replay was on its way is replayed again, then deleted', async () => {
    const { requestId, name } = await spooled({ fallback: false });
    clock.t = T0 + 5 * SEC;
    // The visitor sends the form again while the server is handling the replay: the entry is rewritten meanwhile.
    onRequest = async () => {
      onRequest = null;
      await new SpoolStore(dir).keep({
        requestId,
        body: { ...body(requestId), comment: 'Свадьба, 40 гостей' },
        submittedAt: clock.t,
        route: 'fallback',
        reason: '503',
        fallback: { chatId: '-1001000000001', messageId: 4712, sentAt: new Date(clock.t).toISOString() },
        now: clock.t,
      });
    };
    answers.push({ status: 201 }, { status: 200 });
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(entries()).toEqual([name]);
    expect(readEntry(name)).toMatchObject({ revision: 2, route: 'fallback', submitted_at: '2026-12-01T10:15:30.123Z' });
    await replayer.step();
    expect(received.map((r) => [r.body.request_id, r.body.late.fallback?.message_id])).toEqual([
      [requestId, undefined],
      [requestId, 4712],
    ]);
    expect(entries()).toEqual([]);
  });
});

describe('the backoff', () => {
  it('first replay 5 s after the submission, then 15 s, 60 s, then every 5 minutes; attempts are kept in the entry', async () => {
    const { name } = await spooled();
    const replayer = new SpoolReplayer({ env: env(), clock });
    const sentAt: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const due = Date.parse(readEntry(name).next_attempt_at);
      clock.t = due - 1;
      expect(await replayer.step()).toBe(1);
      expect(received).toHaveLength(i);
      clock.t = due;
      await replayer.step();
      expect(received).toHaveLength(i + 1);
      sentAt.push(clock.t);
      expect(readEntry(name)).toMatchObject({ attempts: i + 1, last_error: '503' });
    }
    const gaps = [sentAt[0] - T0, ...sentAt.slice(1).map((t, i) => t - sentAt[i])];
    expect(gaps).toEqual([5 * SEC, 15 * SEC, 60 * SEC, 5 * MIN, 5 * MIN, 5 * MIN]);
    expect(logs.filter((l) => l.startsWith('warn: [spool]') && l.includes('replay failed (503)'))).toHaveLength(6);
  });

  it.each([
    ['a timeout', { status: 201, hang: true }, 'timeout'],
    ['a 401', { status: 401 }, '401'],
    ['a 500', { status: 500 }, '500'],
  ] as const)(
    '%s counts as a failed attempt',
    async (_, answer, error) => {
      const { name } = await spooled();
      clock.t = T0 + 5 * SEC;
      answers.push(answer);
      await new SpoolReplayer({ env: env(), clock }).step();
      expect(readEntry(name)).toMatchObject({ attempts: 1, last_error: error, next_attempt_at: new Date(T0 + 20 * SEC).toISOString() });
    },
    15_000,
  );

  it('oldest first, one at a time', async () => {
    const older = await spooled({ submittedAt: T0 - 2 * SEC });
    const newer = await spooled({ submittedAt: T0 - SEC });
    clock.t = T0 + 10 * SEC;
    fallbackAnswer = { status: 201 };
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([older.requestId]);
    expect(entries()).toEqual([newer.name]);
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([older.requestId, newer.requestId]);
  });
});

describe('the server back: one replay taken, the others follow at once', () => {
  /** An entry that has failed `attempts` times during an outage and waits until `nextAt`. */
  async function failed(submittedAt: number, attempts: number, nextAt: number) {
    const entry = await spooled({ submittedAt });
    await new SpoolStore(dir).update(entry.name, (e) => ({
      ...e,
      attempts,
      next_attempt_at: new Date(nextAt).toISOString(),
      last_error: '503',
    }));
    return entry;
  }

  /** Three entries of an outage: the oldest due now (T0), the others in five minutes and in 50 s. */
  async function afterAnOutage() {
    const first = await failed(T0 - 30 * MIN, 5, T0);
    const second = await failed(T0 - 20 * MIN, 4, T0 + 5 * MIN);
    const third = await failed(T0 - 10 * MIN, 3, T0 + 50 * SEC);
    clock.t = T0;
    return { replayer: new SpoolReplayer({ env: env(), clock }), first, second, third };
  }

  it('after a 201, the entries waiting out a failed attempt are replayed without waiting, oldest first, one at a time', async () => {
    const { replayer, first, second, third } = await afterAnOutage();
    fallbackAnswer = { status: 201 };
    expect(await replayer.step()).toBe(0);
    expect(received.map((r) => r.body.request_id)).toEqual([first.requestId]);
    // The clock stands still: the others go at the next passes, not at their own times.
    expect(await replayer.step()).toBe(0);
    expect(await replayer.step()).toBe(0);
    expect(received.map((r) => r.body.request_id)).toEqual([first.requestId, second.requestId, third.requestId]);
    expect(entries()).toEqual([]);
    expect(await replayer.step()).toBe(60 * SEC);
  });

  it('a replay that fails after it stops that: the rest wait for their own times again', async () => {
    const { replayer, first, second, third } = await afterAnOutage();
    answers.push({ status: 201 }, { status: 503 });
    await replayer.step();
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([first.requestId, second.requestId]);
    expect(readEntry(second.name)).toMatchObject({ attempts: 5, next_attempt_at: new Date(T0 + 5 * MIN).toISOString() });
    expect(await replayer.step()).toBe(50 * SEC);
    expect(received).toHaveLength(2);
    expect(entries()).toEqual([second.name, third.name]);
  });

  it("an entry not yet tried keeps its first replay's time (5 s after its submission)", async () => {
    const old = await spooled({ submittedAt: T0 - SEC, fallback: false });
    const replayer = new SpoolReplayer({ env: env(), clock });
    clock.t = T0 + 4 * SEC;
    answers.push({ status: 201 });
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([old.requestId]);
    const fresh = await spooled({ submittedAt: clock.t });
    expect(await replayer.step()).toBe(5 * SEC);
    expect(entries()).toEqual([fresh.name]);
  });
});

describe('422: kept aside, never retried, reported', () => {
  it('moved to rejected/ (not deleted), logged at error level, one alert for two rejections', async () => {
    const first = await spooled({ submittedAt: T0 - 2 * SEC });
    const second = await spooled({ submittedAt: T0 - SEC });
    clock.t = T0 + 10 * SEC;
    fallbackAnswer = { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } };
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    await replayer.step();
    expect(entries()).toEqual([]);
    expect(rejected()).toEqual([first.name, second.name]);
    expect(statSync(join(dir, 'rejected', first.name)).mode & 0o777).toBe(0o600);
    expect(logs.filter((l) => l.startsWith('error: [spool]') && l.includes('REJECTED') && l.includes('422: phone invalid'))).toHaveLength(
      2,
    );
    await waitUntil(() => adminMessages().length === 1, 'the alert');
    expect(adminMessages()[0].text).toContain(first.requestId);
    expect(adminMessages()[0].text).toContain('422');
    // Never retried: later passes send nothing more.
    clock.t += 10 * MIN;
    expect(await replayer.step()).toBeGreaterThan(0);
    expect(received).toHaveLength(2);
    // No personal data in the alert or the log lines.
    for (const line of [...logs, adminMessages()[0].text])
      for (const pii of ['Анна', 'anna_k', '9991234567', '198.51.100']) expect(line).not.toContain(pii);
  });

  it('without ADMIN_CHAT_ID the alert is logged only', async () => {
    await spooled();
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 422, body: { error: 'invalid', errors: { name: 'too_short' } } });
    await new SpoolReplayer({ env: env({ adminChatId: null }), clock }).step();
    expect(logs.filter((l) => l.includes('alert rejected not sent (no ADMIN_CHAT_ID'))).toHaveLength(1);
    expect(adminMessages()).toHaveLength(0);
  });
});

describe('a file that is not a spool entry: set aside at once, never in the way', () => {
  /** Writes `content` as the spool file of a new request id submitted at `submittedAt`. */
  const badFile = (submittedAt: number, content: string) => {
    const requestId = crypto.randomUUID();
    const name = entryName(submittedAt, requestId);
    writeFileSync(join(dir, name), content, { mode: 0o600 });
    return { requestId, name };
  };
  const reasonOf = (name: string) => readFileSync(join(dir, 'rejected', `${name}.reason`), 'utf8');

  it('with the server down: every malformed file goes to rejected/ with its reason in the first pass, and the entry behind them is tried', async () => {
    const array = badFile(T0 - 6 * SEC, '[]');
    const nothing = badFile(T0 - 5 * SEC, 'null');
    const noAttempts = await spooled({ submittedAt: T0 - 4 * SEC });
    const raw: Partial<SpoolEntry> = readEntry(noAttempts.name);
    delete raw.attempts;
    writeFileSync(join(dir, noAttempts.name), JSON.stringify(raw));
    const notJson = badFile(T0 - 3 * SEC, 'Анна Ким +79991234567 @anna_k');
    const behind = await spooled({ submittedAt: T0 - 2 * SEC });
    clock.t = T0 + 5 * SEC;
    fallbackAnswer = { status: 503 };
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();

    // The entry behind them was tried in that same pass, and its backoff works.
    expect(received.map((r) => r.body.request_id)).toEqual([behind.requestId]);
    expect(readEntry(behind.name)).toMatchObject({ attempts: 1, last_error: '503' });
    expect(entries()).toEqual([behind.name]);
    expect(rejected()).toEqual([array.name, nothing.name, noAttempts.name, notJson.name].sort());
    expect(reasonOf(array.name)).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z the file holds an array, not an object\n$/);
    expect(reasonOf(nothing.name)).toContain(' the file holds null, not an object');
    expect(reasonOf(noAttempts.name)).toContain(' attempts is not a whole number from 0');
    expect(reasonOf(notJson.name)).toContain(' not JSON');
    // Kept as they were, for ops.
    expect(readFileSync(join(dir, 'rejected', nothing.name), 'utf8')).toBe('null');
    for (const bad of [array, nothing, noAttempts, notJson]) {
      expect(logs.filter((l) => l.startsWith(`error: [spool] ${bad.requestId} malformed (`))).toHaveLength(1);
    }
    expect(logs.some((l) => l.includes('undefined') || l.includes('Invalid time value'))).toBe(false);
    // One alert (throttled per kind), naming the first file by its request id.
    await waitUntil(() => adminMessages().length === 1, 'the alert');
    expect(adminMessages()[0].text).toContain(`повреждён (request_id ${array.requestId}: the file holds an array, not an object)`);
    // No personal data from the files' content anywhere.
    for (const line of [...logs, adminMessages()[0].text])
      for (const pii of ['Анна', 'anna_k', '9991234567']) expect(line).not.toContain(pii);
    // Counted as rejected, not as waiting; later passes leave them alone.
    expect(await spoolMetricsText({ spool: { dir, maxAgeMs: 7 * DAY } } as never, clock.t)).toContain('landing_spool_depth 1\n');
    clock.t += 15 * SEC;
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([behind.requestId, behind.requestId]);
    expect(adminMessages()).toHaveLength(1);
  });

  it.each([
    ['a version other than 1', (e: any) => ({ ...e, version: 2 }), 'version is not 1'],
    ['another request id', (e: any) => ({ ...e, request_id: crypto.randomUUID() }), "request_id is not the file name's"],
    ['a time that is not one', (e: any) => ({ ...e, next_attempt_at: 'soon' }), 'next_attempt_at is not a time'],
    ['an unknown route', (e: any) => ({ ...e, route: 'server' }), 'route is not fallback or lost'],
    ['a fallback without its message id', (e: any) => ({ ...e, fallback: { ...e.fallback, message_id: '4711' } }), 'fallback is not'],
    ['a body of another request', (e: any) => ({ ...e, body: { ...e.body, request_id: crypto.randomUUID() } }), 'body is not an object'],
    ['attempts below 0', (e: any) => ({ ...e, attempts: -1 }), 'attempts is not a whole number from 0'],
    ['no revision', (e: any) => ({ ...e, revision: undefined }), 'revision is not a whole number from 1'],
  ])('%s: set aside with that reason', async (_, change, reason) => {
    const { name } = await spooled();
    writeFileSync(join(dir, name), JSON.stringify(change(readEntry(name))));
    clock.t = T0 + 5 * SEC;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(received).toHaveLength(0);
    expect(rejected()).toEqual([name]);
    expect(reasonOf(name)).toContain(reason);
  });

  it('a fallback of null is no fallback: the entry is replayed', async () => {
    const { name, requestId } = await spooled();
    writeFileSync(join(dir, name), JSON.stringify({ ...readEntry(name), fallback: null }));
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 201 });
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(received[0].body).toMatchObject({ request_id: requestId, late: { route: 'fallback', reason: '503' } });
    expect(received[0].body.late.fallback).toBeUndefined();
    expect(entries()).toEqual([]);
  });

  it('sent again while its file is malformed: the file is set aside, the new submission kept, and the next pass alerts', async () => {
    const bad = badFile(T0 - 60 * SEC, '{"version": 1}');
    const { requestId } = bad;
    await new SpoolStore(dir).keep({
      requestId,
      body: body(requestId),
      submittedAt: T0,
      route: 'lost',
      reason: 'network',
      now: T0,
    });
    expect(rejected()).toEqual([bad.name]);
    expect(reasonOf(bad.name)).toContain('attempts is not a whole number from 0');
    const [kept] = entries();
    expect(readEntry(kept)).toMatchObject({ request_id: requestId, route: 'lost', attempts: 0, revision: 1 });
    await new SpoolReplayer({ env: env(), clock }).step();
    await waitUntil(() => adminMessages().length === 1, 'the alert');
    expect(adminMessages()[0].text).toContain(`повреждён (request_id ${requestId}: `);
  });

  it('an entry whose handling fails in an unexpected way is left alone for a minute; the others go on', async () => {
    const first = await spooled({ submittedAt: T0 - 2 * SEC });
    const second = await spooled({ submittedAt: T0 - SEC });
    clock.t = T0 + 10 * SEC;
    fallbackAnswer = { status: 503 };
    // The disk fails writing that one file's update.
    const open = fsp.open.bind(fsp);
    const broken = vi
      .spyOn(fsp, 'open')
      .mockImplementation((path, ...rest) =>
        String(path).includes(`.tmp-${first.name}`)
          ? Promise.reject(Object.assign(new Error('i/o error'), { code: 'EIO' }))
          : open(path, ...rest),
      );
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([first.requestId, second.requestId]);
    expect(readEntry(second.name)).toMatchObject({ attempts: 1 });
    expect(logs).toContain(`error: [spool] ${first.requestId} could not be handled (EIO: i/o error): left alone for 60 s`);
    // Within the minute it is not tried again (the other one is, on its backoff); after it, it is (the disk is fine again).
    broken.mockRestore();
    const triesOfFirst = () => received.filter((r) => r.body.request_id === first.requestId).length;
    clock.t += 30 * SEC;
    await replayer.step();
    expect(received.map((r) => r.body.request_id).slice(2)).toEqual([second.requestId]);
    expect(triesOfFirst()).toBe(1);
    clock.t += 30 * SEC;
    await replayer.step();
    expect(triesOfFirst()).toBe(2);
    expect(readEntry(first.name)).toMatchObject({ attempts: 1 });
  });
});

describe('rejected/ expires after LANDING_SPOOL_REJECTED_DAYS', () => {
  it('an entry set aside is deleted with its reason file once the days have passed since it was set aside, logged', async () => {
    const { name, requestId } = await spooled({ submittedAt: T0 - DAY });
    await new SpoolStore(dir).reject(name, '422: phone invalid', T0);
    expect(readdirSync(join(dir, 'rejected')).sort()).toEqual([name, `${name}.reason`]);
    clock.t = T0 + 14 * DAY;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(rejected()).toEqual([name]);
    clock.t = T0 + 14 * DAY + SEC;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(readdirSync(join(dir, 'rejected'))).toEqual([]);
    expect(logs).toContain(
      `error: [spool] ${requestId} deleted from ${join(dir, 'rejected')}: set aside more than LANDING_SPOOL_REJECTED_DAYS=14 ago`,
    );
    expect(await spoolMetricsText({ spool: { dir, maxAgeMs: 7 * DAY } } as never, clock.t)).toContain('landing_spool_rejected 0\n');
  });

  it('the time counts from the later of setting aside and the last edit; a reason file left alone is removed; other files stay', async () => {
    const edited = await spooled({ submittedAt: T0 - 2 * SEC });
    const moved = await spooled({ submittedAt: T0 - SEC });
    const store = new SpoolStore(dir);
    await store.reject(edited.name, '422: phone invalid', T0);
    await store.reject(moved.name, '422: phone invalid', T0);
    // Ops fixed one by hand ten days later, and moved the other back for replay.
    const tenDays = new Date(T0 + 10 * DAY);
    utimesSync(join(dir, 'rejected', edited.name), tenDays, tenDays);
    await fsp.rename(join(dir, 'rejected', moved.name), join(dir, moved.name));
    writeFileSync(join(dir, 'rejected', 'notes.txt'), 'ops notes');
    clock.t = T0 + 20 * DAY;
    fallbackAnswer = { status: 503 };
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(readdirSync(join(dir, 'rejected')).sort()).toEqual([edited.name, `${edited.name}.reason`, 'notes.txt'].sort());
    clock.t = T0 + 24 * DAY + SEC;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(readdirSync(join(dir, 'rejected'))).toEqual(['notes.txt']);
  });

  it('a replayer looks at rejected/ at most once a minute', async () => {
    const { name } = await spooled({ submittedAt: T0 - 2 * SEC });
    await new SpoolStore(dir).reject(name, '422: phone invalid', T0);
    const replayer = new SpoolReplayer({ env: env(), clock });
    clock.t = T0 + 14 * DAY - 10 * SEC;
    await replayer.step();
    clock.t = T0 + 14 * DAY + SEC;
    await replayer.step();
    expect(rejected()).toEqual([name]);
    clock.t = T0 + 14 * DAY + 50 * SEC;
    await replayer.step();
    expect(rejected()).toEqual([]);
  });
});

describe('429: every replay waits for Retry-After', () => {
  it('no replay of any entry before Retry-After has passed; then oldest first again', async () => {
    const older = await spooled({ submittedAt: T0 - 2 * SEC });
    await spooled({ submittedAt: T0 - SEC });
    clock.t = T0 + 10 * SEC;
    answers.push({ status: 429, body: { error: 'rate_limited', why: 'hourly' }, headers: { 'Retry-After': '30' } });
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(received).toHaveLength(1);
    clock.t = T0 + 39 * SEC;
    expect(await replayer.step()).toBe(SEC);
    expect(received).toHaveLength(1);
    clock.t = T0 + 40 * SEC;
    answers.push({ status: 201 });
    await replayer.step();
    expect(received.map((r) => r.body.request_id)).toEqual([older.requestId, older.requestId]);
    expect(logs.some((l) => l.includes('replay → 429 hourly: every replay waits 30 s'))).toBe(true);
  });

  it('without Retry-After: a minute', async () => {
    await spooled();
    clock.t = T0 + 5 * SEC;
    answers.push({ status: 429, body: { error: 'rate_limited', why: 'secret' } });
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(await replayer.step()).toBe(60 * SEC);
  });
});

describe('maximum age', () => {
  it('an entry older than LANDING_SPOOL_MAX_AGE_DAYS is dropped, logged (id, age, route; no personal data) and counted', async () => {
    const old = await spooled({ submittedAt: T0 - 8 * DAY });
    const young = await spooled({ submittedAt: T0 - 6 * DAY });
    const droppedBefore = spoolShared(dir).dropped;
    clock.t = T0;
    fallbackAnswer = { status: 503 };
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(entries()).toEqual([young.name]);
    const line = logs.find((l) => l.includes(`${old.requestId} dropped`));
    expect(line).toMatch(
      /^error: \[spool\] .* dropped: older than LANDING_SPOOL_MAX_AGE_DAYS=7 \(age 8\.0 d, route fallback, 0 failed replays\)$/,
    );
    for (const pii of ['Анна', 'anna_k', '9991234567', '198.51.100']) expect(line).not.toContain(pii);
    expect(spoolShared(dir).dropped).toBe(droppedBefore + 1);
    expect(received.map((r) => r.body.request_id)).toEqual([young.requestId]);
    expect(await spoolMetricsText({ spool: { dir, maxAgeMs: 7 * DAY } } as never, T0)).toContain(
      `landing_spool_dropped_total ${droppedBefore + 1}\n`,
    );
  });

  it('rejected entries are not dropped by LANDING_SPOOL_MAX_AGE_DAYS', async () => {
    const { name } = await spooled({ submittedAt: T0 - 8 * DAY });
    await new SpoolStore(dir).reject(name, '422: phone invalid', T0);
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(rejected()).toEqual([name]);
  });
});

describe('the "older than an hour" alert', () => {
  it('once per 30 minutes, and the throttle survives a restart (a new replayer on the same directory)', async () => {
    await spooled({ submittedAt: T0 - 61 * MIN });
    fallbackAnswer = { status: 503 };
    await new SpoolReplayer({ env: env(), clock }).step();
    await waitUntil(() => adminMessages().length === 1, 'the first alert');
    expect(adminMessages()[0].text).toMatch(/дольше часа.*В очереди: 1/);
    clock.t = T0 + 20 * MIN;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(adminMessages()).toHaveLength(1);
    clock.t = T0 + ALERT_INTERVAL_MS;
    await new SpoolReplayer({ env: env(), clock }).step();
    expect(adminMessages()).toHaveLength(2);
  });

  it('in LANDING_LOCALE: English with en', async () => {
    await spooled({ submittedAt: T0 - 61 * MIN });
    fallbackAnswer = { status: 503 };
    await new SpoolReplayer({ env: env({ locale: 'en' }), clock }).step();
    await waitUntil(() => adminMessages().length === 1, 'the alert');
    expect(adminMessages()[0].text).toMatch(/over an hour.*Waiting: 1/);
    expect(adminMessages()[0].text).not.toMatch(/[\u0400-\u04FF]/);
  });

  it('an alert Telegram did not take is tried again at the next pass', async () => {
    await spooled({ submittedAt: T0 - 61 * MIN });
    sandbox.inject({ method: 'sendMessage', kind: 'server_error' });
    const replayer = new SpoolReplayer({ env: env(), clock });
    await replayer.step();
    expect(adminMessages()).toHaveLength(0);
    clock.t += SEC;
    await replayer.step();
    expect(adminMessages()).toHaveLength(1);
  });
});

describe('the loop', () => {
  it('runs on its own: a due entry is replayed and its file disappears', async () => {
    const { name } = await spooled({ submittedAt: Date.now() - 10 * SEC });
    expect(entries()).toEqual([name]);
    fallbackAnswer = { status: 201 };
    const replayer = new SpoolReplayer({ env: env(), clock: realClock });
    replayer.start();
    try {
      await waitUntil(() => entries().length === 0, 'the entry to be replayed and deleted');
    } finally {
      await replayer.stop();
    }
    expect(received).toHaveLength(1);
  });

  it('a new entry wakes it up: replayed 5 s after it was written', async () => {
    fallbackAnswer = { status: 201 };
    const replayer = new SpoolReplayer({ env: env(), clock: realClock });
    replayer.start();
    try {
      const { requestId } = await spooled({ submittedAt: Date.now() });
      const written = Date.now();
      await waitUntil(() => received.length === 1, 'the replay', 15_000);
      expect(Date.now() - written).toBeGreaterThanOrEqual(4_900);
      expect(received[0].body.request_id).toBe(requestId);
    } finally {
      await replayer.stop();
    }
  }, 20_000);

  it('stop(): an in-flight replay is abandoned and its entry stays as it was', async () => {
    const { name } = await spooled({ submittedAt: Date.now() - 10 * SEC });
    fallbackAnswer = { status: 201, hang: true };
    const replayer = new SpoolReplayer({ env: env(), clock: realClock });
    replayer.start();
    await waitUntil(() => received.length === 1, 'the replay to be on its way');
    await replayer.stop();
    expect(entries()).toEqual([name]);
    expect(readEntry(name)).toMatchObject({ attempts: 0 });
    expect(logs.some((l) => l.includes('replay abandoned (stopping): the entry stays'))).toBe(true);
  });
});

describe('the lock: one replaying landing per directory', () => {
  let child: ChildProcess | null = null;
  afterEach(() => {
    child?.kill('SIGKILL');
    child = null;
  });
  const writeLock = (pid: number, host = hostname()) =>
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host, token: 'other', started_at: new Date().toISOString() }));

  /** Another process holding the lock as a landing does: flock on `<dir>/.lock`, its pid in the file. */
  async function otherHolder(): Promise<ChildProcess> {
    const script = `
      const fs = require('node:fs');
      const fd = fs.openSync(process.argv[1], 'w', 0o600);
      require('fs-ext').flockSync(fd, 'exnb');
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: require('node:os').hostname(), token: 'theirs' }));
      process.stdout.write('locked');
      setInterval(() => {}, 1000);`;
    const holder = spawn(process.execPath, ['-e', script, join(dir, LOCK_FILE)], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
    });
    return holder;
  }

  it('two replayers in one process — the same pid on the same host, as two containers whose landings are both pid 1 — cannot both hold it', async () => {
    const keys = ['LEADS_ENDPOINT', 'LEADS_SECRET', 'LANDING_SPOOL_DIR', 'TELEGRAM_BOT_TOKEN', 'LEADS_CHAT_ID'];
    const spoolDirBefore = process.env.LANDING_SPOOL_DIR;
    setEnv({ LEADS_ENDPOINT: `${leads.url}/leads`, LEADS_SECRET: 'spool-test-secret-123', LANDING_SPOOL_DIR: dir }, keys);
    const first = await startSpoolReplay();
    try {
      expect(first.ok).toBe(true);
      const second = await startSpoolReplay();
      expect(second).toEqual({
        ok: false,
        problem:
          `LANDING_SPOOL_DIR ${dir} is in use by another landing process (pid ${process.pid}): give each landing its own spool ` +
          'directory, or stop the other one (a lock left by a dead process is taken over)',
      });
      expect(await acquireSpoolLock(dir)).toMatchObject({ ok: false, holder: { pid: process.pid, host: hostname() } });
    } finally {
      if (first.ok) await first.stop();
      setEnv({ LANDING_SPOOL_DIR: spoolDirBefore }, keys);
    }
    // Given back at stop: the file is gone, and the next one takes the lock fresh.
    expect(readdirSync(dir)).not.toContain(LOCK_FILE);
    const next = await acquireSpoolLock(dir);
    expect(next).toMatchObject({ ok: true, tookOver: null });
    if (next.ok) await next.lock.release();
  });

  it('another live process holds it: refused, with one clear line; once that process is killed, taken over at once', async () => {
    child = await otherHolder();
    const pid = child.pid!;
    const refused = await acquireSpoolLock(dir);
    expect(refused).toMatchObject({ ok: false, holder: { pid } });
    if (refused.ok) throw new Error('unreachable');
    expect(lockRefusal(dir, refused.holder)).toBe(
      `LANDING_SPOOL_DIR ${dir} is in use by another landing process (pid ${pid}): give each landing its own spool directory, ` +
        'or stop the other one (a lock left by a dead process is taken over)',
    );
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // Its file is still there, with its pid; the kernel let go of the lock when the process died.
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(pid);
    const taken = await acquireSpoolLock(dir);
    expect(taken).toMatchObject({ ok: true, tookOver: { pid } });
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    expect(statSync(join(dir, LOCK_FILE)).mode & 0o777).toBe(0o600);
    if (taken.ok) taken.lock.releaseSync();
    expect(readdirSync(dir)).not.toContain(LOCK_FILE);
  });

  it('a lock file nobody holds is taken over whatever pid it names — a live one (reused) or our own', async () => {
    for (const pid of [process.ppid, process.pid]) {
      writeLock(pid);
      const taken = await acquireSpoolLock(dir);
      expect(taken).toMatchObject({ ok: true, tookOver: { pid, host: hostname() } });
      if (taken.ok) await taken.lock.release();
    }
  });

  it('the lock file deleted by hand: another landing can lock a new one, and the first one sees that it lost it', async () => {
    const first = await acquireSpoolLock(dir);
    if (!first.ok) throw new Error('not taken');
    expect(await first.lock.owned()).toBe(true);
    rmSync(join(dir, LOCK_FILE));
    const second = await acquireSpoolLock(dir);
    expect(second).toMatchObject({ ok: true, tookOver: null });
    expect(await first.lock.owned()).toBe(false);
    // Giving back a lock that is not ours any more leaves the other one's file alone.
    await first.lock.release();
    expect(readdirSync(dir)).toContain(LOCK_FILE);
    if (second.ok) expect(await second.lock.owned()).toBe(true);
    if (second.ok) await second.lock.release();
  });

  it('a replayer whose lock file was replaced stops replaying', async () => {
    await spooled();
    const mine = await acquireSpoolLock(dir);
    if (!mine.ok) throw new Error('not taken');
    writeLock(process.ppid);
    clock.t = T0 + 5 * SEC;
    await new SpoolReplayer({ env: env(), clock, lock: mine.lock }).step();
    expect(received).toHaveLength(0);
    expect(logs.some((l) => l.includes("is not this process's any more: replay stopped"))).toBe(true);
    await mine.lock.release();
  });
});

describe('metrics', () => {
  it('depth, oldest age, rejected, dropped and replayed in the Prometheus text format', async () => {
    await spooled({ submittedAt: T0 - 90 * SEC });
    await spooled({ submittedAt: T0 - 30 * SEC });
    const aside = await spooled({ submittedAt: T0 - 10 * SEC });
    await new SpoolStore(dir).reject(aside.name, '422: phone invalid', T0);
    const shared = spoolShared(dir);
    shared.dropped = 3;
    shared.replayed = 5;
    const text = await spoolMetricsText({ spool: { dir, maxAgeMs: 7 * DAY } } as never, T0);
    expect(text.split('\n').filter((l) => !l.startsWith('#'))).toEqual([
      'landing_spool_depth 2',
      'landing_spool_oldest_age_seconds 90',
      'landing_spool_rejected 1',
      'landing_spool_dropped_total 3',
      'landing_spool_replayed_total 5',
      '',
    ]);
    expect(text).toContain('# TYPE landing_spool_depth gauge\n');
    expect(text).toContain('# TYPE landing_spool_replayed_total counter\n');
    expect(await spoolMetricsText({ spool: null } as never, T0)).toContain('landing_spool_depth 0\n');
  });

  it('a log line on each change of depth', async () => {
    const a = await spooled({ submittedAt: T0 - 2 * SEC });
    await spooled({ submittedAt: T0 - SEC });
    await new SpoolStore(dir).remove(a.name);
    await new SpoolStore(dir).noteDepth(T0);
    await new SpoolStore(dir).noteDepth(T0);
    expect(logs.filter((l) => l.includes('[spool] depth'))).toEqual([
      'log: [spool] depth 1 (oldest 0 s)',
      'log: [spool] depth 2 (oldest 1 s)',
      'log: [spool] depth 1 (oldest 1 s)',
    ]);
  });
});

describe('the files', () => {
  it('named by the submitted time (13 digits) and request id, mode 0600, in a directory; no temporary file left', async () => {
    const { name, requestId } = await spooled();
    expect(name).toBe(`${T0}-${requestId}.json`);
    expect(entryName(5, requestId)).toBe(`0000000000005-${requestId}.json`);
    expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(readEntry(name)).toMatchObject({ version: 1, request_id: requestId, attempts: 0, revision: 1 });
  });

  it('written through a temporary file, fsync, rename, fsync of the directory', async () => {
    const probe = await fsp.open(join(dir, 'probe'), 'w');
    const handleProto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const sync = vi.spyOn(handleProto, 'sync');
    const rename = vi.spyOn(fsp, 'rename');
    const { name } = await spooled();
    expect(rename).toHaveBeenCalledTimes(1);
    expect(rename.mock.calls[0][0]).toMatch(new RegExp(`/\\.tmp-${name}-[0-9a-f]{8}$`));
    expect(rename.mock.calls[0][1]).toBe(join(dir, name));
    const renamedAt = rename.mock.invocationCallOrder[0];
    expect(sync.mock.invocationCallOrder.filter((o) => o < renamedAt)).toHaveLength(1);
    expect(sync.mock.invocationCallOrder.filter((o) => o > renamedAt)).toHaveLength(1);
  });
});

describe('a write that fails', () => {
  it('a full disk mid-write leaves no temporary file with part of the request behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-enospc-'));
    try {
      const probe = await fsp.open(join(dir, 'probe'), 'w');
      const fileHandle = Object.getPrototypeOf(probe) as { writeFile: (data: string) => Promise<void> };
      await probe.close();
      await fsp.rm(join(dir, 'probe'));
      const write = fileHandle.writeFile;
      vi.spyOn(fileHandle, 'writeFile').mockImplementation(async function (this: unknown, data: string) {
        await write.call(this, data.slice(0, 40));
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      });
      const requestId = crypto.randomUUID();
      const entry = { requestId, body: { request_id: requestId, name: 'Анна' }, submittedAt: 1, route: 'lost' as const, reason: '503' };
      await expect(new SpoolStore(dir).keep({ ...entry, now: 1 })).rejects.toThrow('ENOSPC');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
