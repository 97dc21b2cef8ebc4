/**
 * Late requests (replayed from a landing's spool) and the limits: they are checked and counted at their arrival, in a
 * count of their own (the same per-visitor limit among replays, LEADS_LATE_HOURLY_LIMIT per hour), so that nobody
 * holding the secret passes the limits by calling a request late, and a real replay after an outage does not use up
 * the visitors' hour. A landing whose clock runs ahead is taken at the server's time, noted and alerted once.
 */
import { lead, postLead, sandboxSuite, type TestServer, watchAlerts } from './harness';
import { sqlRow, sqlRows } from './support/test-database';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { parseContact } from '../src/anonymisation/contact';

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const suite = sandboxSuite();
let server: TestServer;
/** The app without Telegram on a fresh database file, under the configured rate limits but for those `env` sets. */
const boot = async (env: Record<string, string>) => (server = await suite.boot({ sandbox: undefined, limits: {}, env }));

/** A replay as the landing sends it: the visitor's body with `late` (lost: no fallback message). */
const late = (body: Record<string, unknown>, submittedAt: number, route = 'lost') => ({
  ...body,
  late: { submitted_at: iso(submittedAt), route, reason: '503' },
});

describe('late requests and the limits', () => {
  it('replays from one visitor meet the per-visitor limit at their arrival; the visitor’s own requests have theirs', async () => {
    await boot({ LEADS_IP_LIMIT: '5', LEADS_HOURLY_LIMIT: '100000' });
    const ip = '203.0.113.77';
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await postLead(server, late(lead({ client_ip: ip }), server.clock.now() - 10 * MIN)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    expect(answers[5].body).toEqual({ error: 'rate_limited', why: 'visitor' });
    expect(Number(answers[5].headers.get('retry-after'))).toBeGreaterThan(0);
    // In time, the same visitor is counted apart from the replays.
    expect((await postLead(server, lead({ client_ip: ip }))).status).toBe(201);
  });

  it('backdated replays have an hourly allowance of their own, counted at arrival, with an alert; the visitors’ hour is untouched', async () => {
    await boot({ LEADS_IP_LIMIT: '100000', LEADS_HOURLY_LIMIT: '3', LEADS_LATE_HOURLY_LIMIT: '4' });
    const alerts = watchAlerts(server);
    const twoHoursAgo = server.clock.now() - 120 * MIN;
    const replays = [];
    for (let i = 0; i < 5; i++) replays.push(await postLead(server, late(lead({ client_ip: `198.51.100.${i + 1}` }), twoHoursAgo)));
    expect(replays.map((a) => a.status)).toEqual([201, 201, 201, 201, 429]);
    expect(replays[4].body).toEqual({ error: 'rate_limited', why: 'hourly' });
    expect((await alerts()).map((a) => a.key)).toContain('late_hourly_limit');

    const inTime = [];
    for (let i = 0; i < 4; i++) inTime.push(await postLead(server, lead({ client_ip: `192.0.2.${i + 1}` })));
    expect(inTime.map((a) => a.status)).toEqual([201, 201, 201, 429]);
    // An hour after the replays arrived, the allowance is free again.
    server.clock.advance(61 * MIN);
    expect((await postLead(server, late(lead({ client_ip: '198.51.100.9' }), twoHoursAgo))).status).toBe(201);
  });

  it('a landing clock ahead: the replay is stored at the server’s time, its trace says so, and ops are alerted once', async () => {
    await boot({});
    const alerts = watchAlerts(server);
    const now = server.clock.now();
    const first = await postLead(server, late(lead(), now + 10 * MIN));
    const second = await postLead(server, late(lead(), now + 10 * MIN));
    expect([first.status, second.status]).toEqual([201, 201]);
    const stored = await sqlRow<{ created_at: number }>(server.db, 'select created_at from leads where id = ?', first.body.lead_number);
    expect(Number(stored!.created_at)).toBe(now);
    const events = await sqlRows<{ detail: string }>(
      server.db,
      "select detail from lead_events where lead_id = ? and kind = 'received_late'",
      first.body.lead_number,
    );
    expect(events[0].detail).toContain("the landing's clock was 600 s ahead");
    const clock = (await alerts()).filter((a) => a.key === 'landing_clock_ahead');
    expect(clock.map((a) => a.result)).toEqual([expect.not.stringMatching(/^throttled$/), 'throttled']);
  });

  it('a route that is none of the landing’s is refused', async () => {
    await boot({});
    const res = await postLead(server, late(lead(), server.clock.now() - MIN, 'server'));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ late: 'invalid' });
  });
});

describe('a replay of an erased contact', () => {
  it('sent before the erasure is stored without its personal data; one sent after it is the person again', async () => {
    await boot({});
    const now = server.clock.now();
    const first = await postLead(server, lead({ telegram: '@victim_one', phone: '+79160000001', name: 'Анна Иванова' }));
    expect(first.status).toBe(201);
    server.clock.advance(10 * 60_000);
    expect(await server.app.get(AnonymisationService).forgetContact(parseContact('@victim_one')!)).toEqual([first.body.lead_number]);

    // Sent on the landing 10 minutes ago (before the erasure), replayed now.
    const replay = await postLead(
      server,
      late(lead({ telegram: '@Victim_One', phone: '+79160000002', name: 'Анна Иванова', comment: 'позвоните' }), now + 60_000),
    );
    expect(replay.status).toBe(201);
    const stored = await sqlRow<Record<string, unknown>>(server.db, 'select * from leads where id = ?', replay.body.lead_number);
    expect(stored).toMatchObject({ name: null, telegram: null, telegram_key: null, phone: null, comment: null });
    expect(stored!.anonymised_at).not.toBeNull();
    const events = await sqlRows<{ detail: string }>(
      server.db,
      'select detail from lead_events where lead_id = ?',
      replay.body.lead_number,
    );
    expect(events.map((e) => e.detail).join('\n')).toContain('anonymised: its contact was erased after it was submitted');

    // Sent after the erasure: the person came back and asked again.
    server.clock.advance(60_000);
    const after = await postLead(server, late(lead({ telegram: '@victim_one', name: 'Анна Иванова' }), server.clock.now() - 1000));
    const kept = await sqlRow<{ name: string | null }>(server.db, 'select name from leads where id = ?', after.body.lead_number);
    expect(kept).toEqual({ name: 'Анна Иванова' });
  });
});

describe('a fallback claim without the landing’s signature', () => {
  it('is ignored: the lead is stored as one without a fallback message, and its trace says why', async () => {
    await boot({});
    const body = lead();
    const claim = { chat_id: '-1001234567890', message_id: 4711, sent_at: iso(server.clock.now() - 59_000) };
    const res = await postLead(server, {
      ...body,
      late: { submitted_at: iso(server.clock.now() - 60_000), route: 'fallback', reason: '503', fallback: claim },
    });
    expect(res.status).toBe(201);
    const stored = await sqlRow<{ fallback_message_id: number | null }>(
      server.db,
      'select fallback_message_id from leads where id = ?',
      res.body.lead_number,
    );
    expect(stored).toEqual({ fallback_message_id: null });
    const events = await sqlRows<{ detail: string }>(server.db, 'select detail from lead_events where lead_id = ?', res.body.lead_number);
    expect(events.map((e) => e.detail).join('\n')).toContain('the claimed fallback message (chat -1001234567890, message 4711) is ignored');
  });
});
