/**
 * `POST /leads` rate limits (docs/requirements.md §1.1, steps 8–9): the per-visitor limit and the hourly limit with
 * its admin alert.
 */
import {
  ADMIN_CHAT,
  FakeClock,
  NO_HOURLY_LIMIT,
  lead,
  postLead,
  sandboxSuite,
  watchAlerts,
  type BootOptions,
  type TestServer,
} from './harness';

const MIN = 60_000;
const suite = sandboxSuite();
const { sandbox, start } = suite;
let server: TestServer;
/** The app on a fresh database, with the Telegram sandbox and no hourly limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot({ limits: NO_HOURLY_LIMIT, ...options }));

afterEach(() => {
  jest.restoreAllMocks();
});

describe('step 8: per-visitor limit', () => {
  it('the 6th accepted submission from one visitor in 10 minutes is 429 (why: visitor) with Retry-After; others pass', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead({ client_ip: '203.0.113.50' }))).status).toBe(201);
      clock.advance(MIN);
    }
    const limited = await postLead(server, lead({ client_ip: '203.0.113.50' }));
    expect(limited).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'visitor' } });
    expect(limited.headers.get('retry-after')).toBe('300');
    expect((await postLead(server, lead({ client_ip: '203.0.113.51' }))).status).toBe(201);
    clock.advance(5 * MIN);
    expect((await postLead(server, lead({ client_ip: '203.0.113.50' }))).status).toBe(201);
  });

  it('repeats count as accepted submissions; IPv4-mapped IPv6 is the same visitor', async () => {
    await boot({ env: { LEADS_IP_LIMIT: '2' } });
    const first = lead({ client_ip: '203.0.113.60' });
    await postLead(server, first);
    expect((await postLead(server, lead({ telegram: first.telegram, client_ip: '::ffff:203.0.113.60' }))).body.repeat).toBe(true);
    expect((await postLead(server, lead({ client_ip: '203.0.113.60' }))).body).toEqual({ error: 'rate_limited', why: 'visitor' });
  });

  it('LEADS_IP_LIMIT and LEADS_IP_WINDOW_SEC are honoured', async () => {
    const clock = new FakeClock();
    await boot({ env: { LEADS_IP_LIMIT: '2', LEADS_IP_WINDOW_SEC: '60' }, clock });
    await postLead(server, lead({ client_ip: '203.0.113.70' }));
    await postLead(server, lead({ client_ip: '203.0.113.70' }));
    expect((await postLead(server, lead({ client_ip: '203.0.113.70' }))).headers.get('retry-after')).toBe('60');
    clock.advance(60_001);
    expect((await postLead(server, lead({ client_ip: '203.0.113.70' }))).status).toBe(201);
  });
});

describe('step 9: hourly limit', () => {
  it('over LEADS_HOURLY_LIMIT per hour: 429 (why: hourly) and one admin alert per hour, even across a restart', async () => {
    const clock = new FakeClock();
    await boot({ env: { LEADS_HOURLY_LIMIT: '3' }, clock });
    let alerts = watchAlerts(server);
    for (let i = 0; i < 3; i += 1) expect((await postLead(server, lead())).status).toBe(201);
    const limited = await postLead(server, lead());
    expect(limited).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'hourly' } });
    expect(Number(limited.headers.get('retry-after'))).toBe(3600);
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'sent' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    expect(sandbox.messages(ADMIN_CHAT)[0].text).toContain('Лимит заявок');

    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([
      { key: 'hourly_limit', result: 'sent' },
      { key: 'hourly_limit', result: 'throttled' },
    ]);
    const dbPath = server.config.databasePath;
    await server.close();
    clock.advance(30 * MIN);
    server = await start({ dbPath, sandbox, clock, env: { LEADS_HOURLY_LIMIT: '3' } });
    alerts = watchAlerts(server);
    expect((await postLead(server, lead())).status).toBe(429);
    // Waits for the decision instead of sleeping: a throttle lost in the restart would come to 'sent', a second message.
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'throttled' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);

    clock.advance(31 * MIN);
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('a failed alert is tried again at the next limited request', async () => {
    await boot({ env: { LEADS_HOURLY_LIMIT: '1' } });
    const alerts = watchAlerts(server);
    await postLead(server, lead());
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1, chat_id: ADMIN_CHAT });
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'failed' }]);
    expect(sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(ADMIN_CHAT))).toHaveLength(1);
    expect(server.logger.lines.filter((l) => l.includes('alert hourly_limit failed'))).toHaveLength(1);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(0);
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([
      { key: 'hourly_limit', result: 'failed' },
      { key: 'hourly_limit', result: 'sent' },
    ]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
  });
});
