/**
 * `/ready` under load and trouble: one answer per second at most, generic details (paths and error texts stay in
 * the log, once per change), storage errors of the submit path and the outbox, and the progress rule (a poison
 * lead next to cards that go out keeps the server ready; Telegram down past the limit does not).
 */
import { rmSync } from 'node:fs';
import { SqliteError } from 'better-sqlite3';
import { DatabaseError } from 'pg';
import { WriteHealth } from '../src/database/write-health';
import { READY_CACHE_MS } from '../src/health/readiness.service';
import { FakeClock, LEADS_CHAT, lead, postLead, type BootOptions, type TestServer, sandboxSuite } from './harness';
import { allowWrites, describePostgresOnly, itSqliteOnly, onPostgres, refuseWrites, sqlRow, sqlRun } from './support/test-database';

const SEC = 1000;
const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, ...options }));

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
  private constructor(readonly id: number) {}

  static async store(): Promise<PoisonLead> {
    const stored = await sqlRow<{ id: number }>(
      server.db,
      `insert into leads (request_id, name, status, created_at) values (?, 'Отравленная', 'new', ?) returning id`,
      crypto.randomUUID(),
      clock.now(),
    );
    return new PoisonLead(stored!.id);
  }

  /** Arms the refusal if the next pass will try the lead. */
  async arm(): Promise<void> {
    if (
      (await value<number>("select next_at as v from outbox where kind = 'card' and done_at is null and lead_id = ?", this.id))! >
      clock.now()
    )
      return;
    sandbox.inject({ method: 'sendMessage', kind: 'bad_request', description: 'Bad Request: BUTTON_USER_INVALID', chat_id: LEADS_CHAT });
  }
}

/** The column `v` of the first row, or undefined when there is none. */
const value = async <T>(sql: string, ...params: unknown[]) => (await sqlRow<{ v: T }>(server.db, sql, ...params))?.v;
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
    expect(await probeWrites()).toBe(probedAt);

    clock.advance(READY_CACHE_MS - 1);
    const burst = await Promise.all(Array.from({ length: 20 }, () => ready()));
    expect(burst.every((r) => r.status === 200)).toBe(true);
    expect(await probeWrites()).toBe(probedAt);

    clock.advance(1);
    expect((await ready()).status).toBe(200);
    expect(await probeWrites()).toBe(clock.now());
  });
});

describe('readiness says what, the log says where and why', () => {
  itSqliteOnly(
    'a replaced database file: generic detail in the answer, the path in the log once per change (SQLite only: the database is a file)',
    async () => {
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
    },
  );

  it('a write the probe cannot make: "write failed", the database\'s error text only in the log', async () => {
    await boot();
    await refuseWrites(server.db);
    try {
      const res = await ready();
      expect(res.status).toBe(503);
      expect(res.body.checks.database).toEqual({ ok: false, detail: 'write failed' });
      expect(JSON.stringify(res.body)).not.toMatch(/readonly|read-only|sqlite|postgres/i);
      const errorText = onPostgres ? 'in a read-only transaction' : 'readonly database';
      expect(server.logger.lines.some((l) => l.includes('readiness check database failing') && l.includes(errorText))).toBe(true);
    } finally {
      await allowWrites(server.db);
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

  it('a token Telegram does not know: "token refused", so the operator looks at the token, not the network', async () => {
    await boot({ env: { TELEGRAM_BOT_TOKEN: '123456:not-the-sandbox-token' } });
    const res = await ready();
    expect([res.status, res.body.checks.telegram]).toEqual([200, { ok: false, detail: 'token refused: check TELEGRAM_BOT_TOKEN' }]);
  });
});

describe('storage errors where the probe write does not see them', () => {
  itSqliteOnly(
    'a full disk: POST /leads refused while the probe write still fits makes /ready 503; room again makes it 200 with no lead sent (SQLite only: max_page_count caps the file; PostgreSQL: below)',
    async () => {
      // No Telegram: only the submit path writes.
      await boot({ sandbox: undefined });
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
    },
  );

  it('a failure of the submit path that is not about storage (a bug, a constraint) does not', async () => {
    await boot();
    const constraint = onPostgres
      ? Object.assign(new DatabaseError('duplicate key value violates unique constraint "leads_request_id_unique"', 0, 'error'), {
          code: '23505',
        })
      : new SqliteError('UNIQUE constraint failed: leads.request_id', 'SQLITE_CONSTRAINT_UNIQUE');
    server.app.get(WriteHealth).recordFailure('submit', constraint, clock.now());
    expect((await ready()).status).toBe(200);
  });
});

describePostgresOnly('storage errors where the probe write does not see them, on PostgreSQL', () => {
  /**
   * PostgreSQL's full disk: a write that needs a new page fails with 53100 disk_full, while the probe's small upsert
   * still fits in a page that exists. No test can cap one database's size, so triggers raise PostgreSQL's own error
   * on the writes that need room: a new lead, and readiness's growth probe.
   */
  async function fillDisk(): Promise<void> {
    await sqlRun(
      server.db,
      `create or replace function test_disk_full() returns trigger language plpgsql as $$
       begin
         raise exception 'could not extend file "base/16384/16385": No space left on device' using errcode = 'disk_full';
       end $$`,
    );
    await sqlRun(server.db, 'create trigger test_disk_full before insert on leads for each row execute function test_disk_full()');
    await sqlRun(
      server.db,
      `create trigger test_disk_full before insert or update on settings for each row
       when (new.key = 'ready_growth_probe') execute function test_disk_full()`,
    );
  }

  async function makeRoom(): Promise<void> {
    await sqlRun(server.db, 'drop trigger test_disk_full on leads');
    await sqlRun(server.db, 'drop trigger test_disk_full on settings');
  }

  it('a full disk (53100): POST /leads refused while the probe write still fits makes /ready 503; room again makes it 200 with no lead sent', async () => {
    // No Telegram: only the submit path writes.
    await boot({ sandbox: undefined });
    expect((await ready()).status).toBe(200);
    await fillDisk();
    expect((await postLead(server, lead())).status).toBe(503);
    const res = await freshReady();
    expect(res.status).toBe(503);
    expect(res.body.checks.database).toEqual({ ok: false, detail: 'storage error on the submit path' });
    expect(server.logger.lines.some((l) => l.includes('readiness check database failing') && l.includes('53100'))).toBe(true);

    // Room again: /ready finds out by itself (a load balancer sends no lead to a server that answers 503).
    await makeRoom();
    expect((await freshReady()).status).toBe(200);
    expect([200, 201]).toContain((await postLead(server, lead())).status);
  });
});

describe('the outbox progress rule', () => {
  it('a poison lead next to cards that go out keeps /ready at 200; Telegram down for longer than the limit makes it 503', async () => {
    await boot({ env: { READY_MAX_OUTBOX_AGE_SEC: '60' } });
    const poison = await PoisonLead.store();
    await poison.arm();
    await server.outbox.tick();
    expect(await sqlRow(server.db, "select last_error from outbox where kind = 'card' and lead_id = ?", poison.id)).toEqual({
      last_error: '400: Bad Request: BUTTON_USER_INVALID',
    });

    // Two minutes and more: the poison lead keeps failing on its retry schedule, other leads get their cards.
    for (let i = 0; i < 13; i++) {
      clock.advance(10 * SEC);
      await poison.arm();
      const id = await submit();
      await server.outbox.tick();
      expect(await publishedAt(id)).toBe(clock.now());
      const res = await ready();
      expect(res.status).toBe(200);
    }
    expect(await publishedAt(poison.id)).toBeNull();
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
    await poison.arm();
    await server.outbox.tick();
    const back = await ready();
    expect(back.status).toBe(200);
    expect(await publishedAt(poison.id)).toBeNull();
  });
});
