/**
 * `POST /leads` against the real app (a fresh database, real HTTP over loopback, the Telegram sandbox): the module
 * switch, the secret, and the lockout of a caller that sends wrong secrets (docs/requirements.md §1.1, steps 1–3).
 */
import { createHmac } from 'node:crypto';
import { SECRET_HEADER } from '@stickers/shared';
import {
  ADMIN_CHAT,
  FakeClock,
  NO_HOURLY_LIMIT,
  SALT,
  lead,
  postLead,
  sandboxSuite,
  waitFor,
  watchAlerts,
  type BootOptions,
  type TestServer,
} from './harness';
import { sqlRow } from './support/test-database';

const MIN = 60_000;
const suite = sandboxSuite();
const { sandbox, start } = suite;
let server: TestServer;
/** The app on a fresh database, with the Telegram sandbox and no hourly limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot({ limits: NO_HOURLY_LIMIT, ...options }));

function row(sql: string, ...params: unknown[]) {
  return sqlRow<Record<string, any>>(server.db, sql, ...params);
}

afterEach(() => {
  jest.restoreAllMocks();
});

const count = async (sql: string, ...params: unknown[]) => (await sqlRow<{ n: number }>(server.db, sql, ...params))!.n;

describe('step 1: module switched off', () => {
  it('LEADS_ENABLED=0 answers 404 not_found', async () => {
    await boot({ env: { LEADS_ENABLED: '0' } });
    const res = await postLead(server, lead());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
  });
  it('an empty LEADS_SECRET answers 404 even with no salt set', async () => {
    await boot({ env: { LEADS_SECRET: '', LEADS_IP_SALT: '' } });
    const res = await postLead(server, lead(), { [SECRET_HEADER]: '' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
  });
});

describe('steps 2–3: secret and wrong-secret lockout', () => {
  it('a wrong or missing secret answers 401 and stores nothing', async () => {
    await boot();
    expect(await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' })).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    const res = await fetch(`${server.url}/leads`, { method: 'POST', body: JSON.stringify(lead()) });
    expect(res.status).toBe(401);
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('after 5 wrong secrets in 10 minutes the caller gets 429 (why: secret), even with the right secret, until the window passes', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead(), { [SECRET_HEADER]: `wrong-${i}` })).status).toBe(401);
      clock.advance(MIN);
    }
    const locked = await postLead(server, lead());
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({ error: 'rate_limited', why: 'secret' });
    // The first failure was at t=0, so the window has room again at t=10 min; now is t=5 min.
    expect(locked.headers.get('retry-after')).toBe('300');
    clock.advance(5 * MIN);
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('missing secrets count as wrong ones: 5 requests without the header lock the caller out, even with the right secret', async () => {
    await boot();
    const noSecret = () =>
      fetch(`${server.url}/leads`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lead()) });
    for (let i = 0; i < 5; i += 1) expect((await noSecret()).status).toBe(401);
    expect(await postLead(server, lead())).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'secret' } });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('four wrong secrets do not lock the caller out', async () => {
    await boot();
    for (let i = 0; i < 4; i += 1) await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' });
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('the lockout survives a restart while its window lasts', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    for (let i = 0; i < 5; i += 1) await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' });
    const dbPath = server.config.databasePath;
    await server.close();
    server = await start({ dbPath, sandbox, clock, env: { LEADS_HOURLY_LIMIT: '100000' } });
    expect(await postLead(server, lead())).toMatchObject({ status: 429, body: { why: 'secret' } });
  });
});

describe('wrong-secret lockout alert', () => {
  it('the 5th wrong secret from one address sends one admin alert, naming the address by its hash only; no second one', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    const callerHash = createHmac('sha256', SALT).update('caller:127.0.0.1').digest('hex');
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead(), { [SECRET_HEADER]: `wrong-${i}` })).status).toBe(401);
      clock.advance(MIN);
    }
    await waitFor(() => sandbox.messages(ADMIN_CHAT).length > 0, 5000, 'the lockout alert');
    const [alert] = sandbox.messages(ADMIN_CHAT);
    expect(alert.text).toContain(callerHash.slice(0, 10));
    expect(alert.text).toContain('LEADS_SECRET');
    expect(alert.text).not.toContain('127.0.0.1');

    // During the lockout: a 6th wrong secret and the right one are both refused, and alert nobody.
    const alerts = watchAlerts(server);
    expect(await postLead(server, lead(), { [SECRET_HEADER]: 'wrong-6' })).toMatchObject({ status: 429, body: { why: 'secret' } });
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([]);
    expect(await count("select count(*) as n from alert_throttles where key like 'secret_lockout:%'")).toBe(1);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);

    // The first failure leaves the window: one more wrong secret starts a new lockout, inside the alert's throttle.
    clock.advance(5 * MIN);
    expect((await postLead(server, lead(), { [SECRET_HEADER]: 'wrong-7' })).status).toBe(401);
    const throttled = (l: string) => l.includes('caller locked out') && l.includes('"alert":"throttled"');
    await waitFor(() => server.logger.lines.some(throttled), 5000, 'the throttled alert');
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    expect(server.logger.lines.join('\n')).not.toContain('127.0.0.1');
  });
});
