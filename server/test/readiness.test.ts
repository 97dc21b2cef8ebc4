/**
 * `/ready` under load and trouble: one answer per second at most, generic details (paths and error texts stay in
 * the log, once per change), storage errors of the submit path and the outbox, and the progress rule (a poison
 * lead next to cards that go out keeps the server ready; Telegram down past the limit does not).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteError } from 'better-sqlite3';
import { WriteHealth } from '../src/database/write-health';
import { READY_CACHE_MS } from '../src/observability/readiness.service';
import { FakeClock, LEADS_CHAT, lead, postLead, type TestServer, sandboxSuite } from './harness';

const SEC = 1000;
const { tmp, sandbox, start } = sandboxSuite();
let server: TestServer;
let clock: FakeClock;
let n = 0;

async function boot(env: Record<string, string> = {}, telegram: typeof sandbox | undefined = sandbox) {
  const dbPath = join(tmp.dir, `ready-${++n}.sqlite`);
  server = await start({ dbPath, sandbox: telegram, clock, env: { LEADS_HOURLY_LIMIT: '100000', LEADS_IP_LIMIT: '100000', ...env } });
  return server;
}

async function ready(): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/ready`);
  return { status: res.status, body: await res.json() };
}

/** Moves the clock past the readiness cache, so the next call computes afresh. */
async function freshReady() {
  clock.advance(READY_CACHE_MS);
  return ready();
}

async function submit(): Promise<number> {
  const res = await postLead(server, lead());
  expect([200, 201]).toContain(res.status);
  await server.outbox.whenIdle();
  return res.body.lead_number as number;
}

/**
 * A poison lead: Telegram refuses its card with a 400 that no retry cures. The card renderer keeps every card
 * within Telegram's rules, so the sandbox refuses it by fault injection: one refusal armed right before each pass in
 * which the lead is due. It is the oldest lead, and a pass takes due leads oldest first, so the refusal is its own.
 */
class PoisonLead {
  readonly id: number;
  constructor() {
    this.id = (
      server.db.sqlite
        .prepare(
          `insert into leads (request_id, name, status, created_at, next_attempt_at) values (?, 'Отравленная', 'new', ?, ?) returning id`,
        )
        .get(crypto.randomUUID(), clock.now(), clock.now()) as { id: number }
    ).id;
  }

  /** Arms the refusal if the next pass will try the lead. */
  arm(): void {
    if (value<number>('select next_attempt_at as v from leads where id = ?', this.id)! > clock.now()) return;
    sandbox.inject({ method: 'sendMessage', kind: 'bad_request', description: 'Bad Request: BUTTON_USER_INVALID', chat_id: LEADS_CHAT });
  }
}

/** The column `v` of the first row, or undefined when there is none. */
const value = <T>(sql: string, ...params: unknown[]) => (server.db.sqlite.prepare(sql).get(...params) as { v: T } | undefined)?.v;
const publishedAt = (id: number) => value<number | null>('select published_at as v from leads where id = ?', id);
const probeWrites = () => value<number>("select updated_at as v from settings where key = 'ready_probe'");

beforeEach(() => {
  clock = new FakeClock();
});

describe('readiness answers cheaply', () => {
  it('one answer (and one probe write) serves every call for READY_CACHE_MS; concurrent calls share it', async () => {
    await boot();
    const first = await ready();
    expect(first.status).toBe(200);
    const probedAt = clock.now();
    expect(probeWrites()).toBe(probedAt);

    clock.advance(READY_CACHE_MS - 1);
    const burst = await Promise.all(Array.from({ length: 20 }, () => ready()));
    expect(burst.every((r) => r.status === 200)).toBe(true);
    expect(probeWrites()).toBe(probedAt);

    clock.advance(1);
    expect((await ready()).status).toBe(200);
    expect(probeWrites()).toBe(clock.now());
  });
});

describe('readiness says what, the log says where and why', () => {
  it('a replaced database file: generic detail in the answer, the path in the log once per change', async () => {
    await boot();
    expect((await ready()).status).toBe(200);
    rmSync(server.config.databasePath);
    const answers = [await freshReady(), await freshReady(), await freshReady()];
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('not_ready');
      expect(res.body.checks.database).toEqual({ ok: false, detail: 'database file is gone or was replaced' });
      expect(JSON.stringify(res.body)).not.toContain(server.config.databasePath);
    }
    const logged = server.logger.lines.filter((l) => l.includes('readiness check database failing'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(server.config.databasePath);
  });

  it('a write the probe cannot make: "write failed", the SQLite error text only in the log', async () => {
    await boot();
    server.db.sqlite.pragma('query_only = 1');
    try {
      const res = await ready();
      expect(res.status).toBe(503);
      expect(res.body.checks.database).toEqual({ ok: false, detail: 'write failed' });
      expect(JSON.stringify(res.body)).not.toMatch(/readonly|sqlite/i);
      expect(server.logger.lines.some((l) => l.includes('readiness check database failing') && l.includes('readonly database'))).toBe(true);
    } finally {
      server.db.sqlite.pragma('query_only = 0');
    }
    const back = await freshReady();
    expect(back.status).toBe(200);
    expect(server.logger.lines.filter((l) => l.includes('readiness check database ok again'))).toHaveLength(1);
  });

  it('Telegram unreachable: "unreachable", without Telegram\'s error text', async () => {
    await boot();
    sandbox.inject({ method: 'getMe', kind: 'bad_request', description: 'Bad Request: secret upstream detail' });
    const res = await ready();
    expect(res.status).toBe(200);
    expect(res.body.checks.telegram).toEqual({ ok: false, detail: 'unreachable' });
    const logged = server.logger.lines.filter((l) => l.includes('readiness check telegram failing'));
    expect(logged).toEqual([expect.stringContaining('secret upstream detail')]);
  });
});

describe('storage errors where the probe write does not see them', () => {
  it('a full disk: POST /leads refused while the probe write still fits makes /ready 503; room again makes it 200 with no lead sent', async () => {
    // No Telegram: only the submit path writes.
    await boot({}, undefined);
    expect((await ready()).status).toBe(200);
    // The database may not grow: a write that needs a new page fails with SQLITE_FULL, as on a full disk.
    const pages = server.db.sqlite.pragma('page_count', { simple: true }) as number;
    server.db.sqlite.pragma(`max_page_count = ${pages}`);
    let refused = false;
    for (let i = 0; i < 500 && !refused; i++) refused = (await postLead(server, lead())).status === 503;
    expect(refused).toBe(true);
    const res = await freshReady();
    expect(res.status).toBe(503);
    expect(res.body.checks.database).toEqual({ ok: false, detail: 'storage error on the submit path' });
    expect(server.logger.lines.some((l) => l.includes('readiness check database failing') && l.includes('SQLITE_FULL'))).toBe(true);

    // Room again: /ready finds out by itself (a load balancer sends no lead to a server that answers 503).
    server.db.sqlite.pragma('max_page_count = 1000000');
    expect((await freshReady()).status).toBe(200);
    expect([200, 201]).toContain((await postLead(server, lead())).status);
  });

  it('a failure of the submit path that is not about storage (a bug, a constraint) does not', async () => {
    await boot();
    const constraint = new SqliteError('UNIQUE constraint failed: leads.request_id', 'SQLITE_CONSTRAINT_UNIQUE');
    server.app.get(WriteHealth).recordFailure('submit', constraint, clock.now());
    expect((await ready()).status).toBe(200);
  });
});

describe('the outbox progress rule', () => {
  it('a poison lead next to cards that go out keeps /ready at 200; Telegram down for longer than the limit makes it 503', async () => {
    await boot({ READY_MAX_OUTBOX_AGE_SEC: '60' });
    const poison = new PoisonLead();
    poison.arm();
    await server.outbox.tick();
    expect(server.db.sqlite.prepare('select last_error from leads where id = ?').get(poison.id)).toEqual({
      last_error: '400: Bad Request: BUTTON_USER_INVALID',
    });

    // Two minutes and more: the poison lead keeps failing on its retry schedule, other leads get their cards.
    for (let i = 0; i < 13; i++) {
      clock.advance(10 * SEC);
      poison.arm();
      const id = await submit();
      await server.outbox.tick();
      expect(publishedAt(id)).toBe(clock.now());
      const res = await ready();
      expect(res.status).toBe(200);
    }
    expect(publishedAt(poison.id)).toBeNull();
    const res = await ready();
    expect(res.body.checks.outbox).toMatchObject({ ok: true, oldest_unpublished_age_sec: 130, last_card_age_sec: 0 });

    // Telegram down: no card at all goes out. Ready while the last card is at most 60 s old, then not.
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1000, chat_id: LEADS_CHAT });
    const lastCardAt = clock.now();
    await submit();
    clock.advance(60 * SEC);
    await server.outbox.tick();
    expect((await ready()).status).toBe(200);
    clock.advance(1 * SEC);
    await server.outbox.tick();
    const stuck = await ready();
    expect(stuck.status).toBe(503);
    expect(stuck.body.checks.outbox).toMatchObject({ ok: false, last_card_age_sec: (clock.now() - lastCardAt) / SEC });
    expect(stuck.body.checks.outbox.detail).toContain('no card went out');

    // Telegram back: the waiting lead gets its card, and the server is ready though the poison lead still waits.
    sandbox.clearFaults();
    clock.advance(15 * 60 * SEC);
    poison.arm();
    await server.outbox.tick();
    const back = await ready();
    expect(back.status).toBe(200);
    expect(publishedAt(poison.id)).toBeNull();
  });
});
