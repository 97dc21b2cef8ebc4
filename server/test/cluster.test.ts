/**
 * Several server instances on one PostgreSQL database. PostgreSQL only: SQLite is one process's embedded
 * file. Two instances of the real app share one database (the harness maps one path to one database) and each has
 * its own HTTP port, clock and connection pool, as two hosts behind a load balancer would.
 */
import { SECRET_HEADER } from '@stickers/shared';
import { TelegramSandbox } from '@stickers/telegram-sandbox';
import {
  ADMIN_CHAT,
  botLaunched,
  FakeClock,
  LEADS_CHAT,
  lead,
  NO_RATE_LIMITS,
  postLead,
  startServer,
  type TestServer,
  tempDir,
  waitFor,
} from './harness';
import { describePostgresOnly, sqlRow, sqlRows } from './support/test-database';
import { LeaseService } from '../src/cluster/lease.service';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';

const FAST_LEASES = { ttlMs: 1500, renewMs: 300 };

describePostgresOnly('two instances on one PostgreSQL (PostgreSQL only: SQLite is one process)', () => {
  const tmp = tempDir();
  const sandbox = new TelegramSandbox();
  let n = 0;
  let servers: TestServer[] = [];
  beforeAll(() => sandbox.start());
  afterAll(async () => {
    await sandbox.stop();
    tmp.remove();
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    sandbox.releaseHanging();
    sandbox.state.reset();
  });

  /** Two instances on one fresh database; the same start time on both clocks. */
  async function pair(
    env: Record<string, string> = NO_RATE_LIMITS,
    options: { telegram?: boolean; polling?: boolean; clock?: () => FakeClock } = {},
  ) {
    const dbPath = `${tmp.dir}/cluster-${++n}.sqlite`;
    const start = () =>
      startServer({
        dbPath,
        env,
        clock: options.clock?.() ?? new FakeClock(),
        sandbox: options.telegram ? sandbox : undefined,
        polling: options.polling,
        leaseTimings: FAST_LEASES,
      });
    // One after the other: the second finds the migrations done.
    const a = await start();
    const b = await start();
    servers.push(a, b);
    return [a, b] as const;
  }

  it('50 parallel posts of one request_id split between them: one 201 and 49 × 200, all with one number', async () => {
    const [a, b] = await pair();
    const body = lead();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => postLead(i % 2 === 0 ? a : b, body)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(49);
    expect(new Set(answers.map((r) => r.body.lead_number)).size).toBe(1);
    expect(await sqlRow(a.db, 'select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('30 parallel posts of one visitor against a limit of 5: exactly 5 accepted, the rest 429', async () => {
    const [a, b] = await pair({ LEADS_IP_LIMIT: '5', LEADS_HOURLY_LIMIT: '100000' });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => postLead(i % 2 === 0 ? a : b, lead({ client_ip: '203.0.113.7' }))),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(25);
    expect(await sqlRow(b.db, 'select count(*) as n from leads')).toEqual({ n: 5 });
  });

  it('20 parallel posts with one phone: one lead and 19 repeats of it', async () => {
    const [a, b] = await pair();
    const phone = '+79990001122';
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postLead(i % 2 === 0 ? a : b, lead({ phone }))));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 200 && r.body.repeat === true)).toHaveLength(19);
    expect(new Set(answers.map((r) => r.body.lead_number)).size).toBe(1);
    expect(await sqlRow(a.db, 'select count(*) as n from leads')).toEqual({ n: 1 });
    expect(await sqlRow(a.db, 'select count(*) as n from lead_repeats')).toEqual({ n: 19 });
  });

  it('wrong secrets counted on one instance lock the caller out on the other too', async () => {
    const [a, b] = await pair();
    for (let i = 0; i < 5; i += 1) expect((await postLead(a, lead(), { [SECRET_HEADER]: 'wrong-secret' })).status).toBe(401);
    expect((await postLead(a, lead())).status).toBe(429);
    expect((await postLead(b, lead())).status).toBe(429);
  });

  it('two instances share the outbox with no leader: both ticking at once publish each lead exactly once', async () => {
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true });
    const numbers: number[] = [];
    for (let i = 0; i < 6; i += 1) numbers.push((await postLead(i % 2 === 0 ? a : b, lead())).body.lead_number as number);
    await Promise.all([a.outbox.whenIdle(), b.outbox.whenIdle()]);
    for (let i = 0; i < 3; i += 1) await Promise.all([a.outbox.tick(), b.outbox.tick()]);
    const cards = sandbox.messages(LEADS_CHAT).filter((m) => m.from.is_bot);
    expect(cards).toHaveLength(6);
    for (const number of numbers) expect(cards.filter((m) => m.text.includes(`#${number}`))).toHaveLength(1);
    // No leader: the instances share the outbox's rows by claiming them, and hold no lease for it.
    expect(await sqlRow(a.db, "select holder from leases where name = 'outbox'")).toBeUndefined();
    expect(await sqlRow(a.db, 'select count(*) as n from outbox where done_at is null')).toEqual({ n: 0 });
  });

  it('when the outbox holder stops, the other instance publishes', async () => {
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true });
    await a.outbox.tick(); // a holds the outbox lease
    await a.close(); // a clean stop gives the lease up
    const number = (await postLead(b, lead())).body.lead_number as number;
    await b.outbox.whenIdle();
    await b.outbox.tick();
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.text.includes(`#${number}`))).toHaveLength(1);
  });

  it('a 429 one instance gets pauses the other one too, for retry_after', async () => {
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true });
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 30, chat_id: LEADS_CHAT });
    await postLead(a, lead());
    await a.outbox.whenIdle();
    const floods = () => sandbox.callsOf('sendMessage').filter((c) => c.status === 429).length;
    expect(floods()).toBe(1);
    await a.close(); // b takes the outbox over at once
    const second = (await postLead(b, lead())).body.lead_number as number;
    await b.outbox.whenIdle();
    await b.outbox.tick();
    // b learnt of the pause from the database: no call during it.
    expect(sandbox.callsOf('sendMessage')).toHaveLength(1);
    b.clock.advance(31_000);
    await b.outbox.tick();
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.text.includes(`#${second}`))).toHaveLength(1);
    expect(await sqlRows(b.db, 'select id from leads where published_at is null')).toEqual([]);
  });

  it('housekeeping runs on one instance at a time, and both ticking at the digest time give one digest and one reminder', async () => {
    // 05:59 UTC = 08:59 in Moscow, a minute before the default LEADS_DIGEST_AT.
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true, clock: () => new FakeClock(Date.UTC(2026, 10, 29, 5, 59)) });
    const number = (await postLead(a, lead())).body.lead_number as number;
    await a.outbox.whenIdle();
    for (const s of [a, b]) s.clock.advance(60_000);
    const runs = (await Promise.all([a, b].map((s) => s.app.get(HousekeepingService).tick()))) as { ran: boolean }[];
    expect(runs.map((r) => r.ran).sort()).toEqual([false, true]);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.text.includes('🗓 Сводка за сутки'))).toHaveLength(1);
    // 30 minutes later the waiting card gets exactly one reminder, whichever instance runs housekeeping.
    for (const s of [a, b]) s.clock.advance(30 * 60_000);
    await Promise.all([a, b].map((s) => s.app.get(HousekeepingService).tick()));
    await Promise.all([a, b].map((s) => s.app.get(HousekeepingService).tick()));
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith(`⏰ Заявка #${number}`))).toHaveLength(1);
  });

  it('polling: only one instance polls; when it stops, the other polls and presses work again', async () => {
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true, polling: true });
    const number = (await postLead(a, lead())).body.lead_number as number;
    await a.outbox.whenIdle();
    await b.outbox.whenIdle();
    const card = await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`)), 5000, 'the card');
    const holder = async (on: TestServer) =>
      (await sqlRow<{ holder: string }>(on.db, "select holder from leases where name = 'telegram-polling'"))?.holder;
    await botLaunched(sandbox);
    const first = await holder(a);
    const [leader, follower] = first === leaseIdOf(a) ? [a, b] : [b, a];
    await leader.close();
    const id = sandbox.press(LEADS_CHAT, card.message_id, `lead:${number}:new:in_progress`);
    const answer = await waitFor(() => sandbox.state.callbackAnswers.find((x) => x.callback_query_id === id), 10_000, 'the press answered');
    expect(answer.text).toBeTruthy();
    expect(await holder(follower)).toBe(leaseIdOf(follower));
    expect(pollConflicts()).toBe(0);
  });

  it('polling: a lease the database could not renew lapses with a line saying so, not that another instance polls', async () => {
    const [a, b] = await pair(NO_RATE_LIMITS, { telegram: true, polling: true });
    await botLaunched(sandbox);
    const held = await sqlRow<{ holder: string }>(a.db, "select holder from leases where name = 'telegram-polling'");
    const leader = held?.holder === leaseIdOf(a) ? a : b;
    const unreachable = Object.assign(new Error('no connection to the database: connect ECONNREFUSED'), { code: 'DATABASE_UNREACHABLE' });
    jest.spyOn(leader.app.get(LeaseService), 'take').mockRejectedValue(unreachable);
    // Nest's loggers write to the app started last: the lines of both.
    const lines = () => [...a.logger.lines, ...b.logger.lines];
    const line = await waitFor(() => lines().find((l) => l.includes('this one stop')), 10_000, 'the leader stops polling');
    expect(line).toContain('polling lease lapsed while the database was unreachable: this one stops until it takes the lease again');
  });

  function leaseIdOf(server: TestServer): string {
    return server.app.get(LeaseService).instanceId;
  }
  function pollConflicts(): number {
    return (sandbox as unknown as { pollConflicts: number }).pollConflicts;
  }
});
