/**
 * The outbox when the database refuses to record what Telegram took (writes refused, disk full): a message Telegram
 * took is never sent again because its recording failed, failed passes back off, readiness hears of it, and a graceful
 * shutdown tries once more to record it.
 */
import Database, { SqliteError } from 'better-sqlite3';
import { Client, DatabaseError, types } from 'pg';
import type { Lead } from '../src/domain/lead';
import { WriteHealth } from '../src/database/write-health';
import { READY_CACHE_MS } from '../src/health/readiness.service';
import { LeadsRepository } from '../src/repositories/leads.repository';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import { FakeClock, LEADS_CHAT, advanceAndTick, submitLead, type TestServer, sandboxSuite } from './harness';
import { allowWrites, onPostgres, READONLY_CODE, refuseWrites, sqlRow, sqlRows } from './support/test-database';

const SEC = 1000;
const MIN = 60 * SEC;
const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;

const boot = async () => (server = await suite.boot({ clock }));

const submit = (overrides: Record<string, unknown> = {}) => submitLead(server, overrides);
const tickAt = (ms: number) => advanceAndTick(server, ms);

async function ready(): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/ready`);
  return { status: res.status, body: await res.json() };
}

const cards = () => sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith('🆕 Заявка'));
const cardsOf = (id: number) => cards().filter((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const pingsOf = (id: number) => sandbox.messages(LEADS_CHAT).filter((m) => m.text === `🔁 Повторное обращение по заявке #${id}`);
const row = async (id: number) => (await sqlRow<Lead>(server.db, 'select * from leads where id = ?', id))!;
const eventsOf = (id: number) =>
  sqlRows<{ kind: string; detail: string }>(server.db, 'select kind, detail from lead_events where lead_id = ? order by id', id);

/**
 * The database starts refusing writes at the moment Telegram has taken a message matching `when` (the sandbox holds
 * it): after Telegram accepted it, before the outbox records it.
 */
function refuseWritesOnceSandboxHas(when: () => boolean): void {
  const gateway = server.app.get(TelegramGateway);
  const send = gateway.send.bind(gateway);
  let armed = true;
  jest.spyOn(gateway, 'send').mockImplementation(async (message) => {
    const answer = await send(message);
    if (armed && when()) {
      armed = false;
      await refuseWrites(server.db);
    }
    return answer;
  });
}

/** What the database says when the disk is full: SQLITE_FULL, or PostgreSQL's disk_full (53100). */
function diskFull(): Error {
  if (!onPostgres) return new SqliteError('database or disk is full', 'SQLITE_FULL');
  return Object.assign(new DatabaseError('could not extend file "base/16384/16385": No space left on device', 0, 'error'), {
    code: '53100',
  });
}

/** The first row of a query on a connection of its own (the server's is closed): the SQLite file, or the PostgreSQL database. */
async function readAfterClose(text: string, ...params: unknown[]): Promise<unknown> {
  if (!onPostgres) {
    const db = new Database(server.config.databasePath, { readonly: true });
    try {
      return db.prepare(text).get(...params);
    } finally {
      db.close();
    }
  }
  // int8 as a number, as the app's pool reads it.
  const client = new Client({
    connectionString: server.config.databaseUrl!,
    types: { getTypeParser: (oid: number, format?: any) => (oid === 20 ? Number : types.getTypeParser(oid, format)) },
  });
  await client.connect();
  try {
    let i = 0;
    return (
      await client.query(
        text.replace(/\?/g, () => `$${++i}`),
        params,
      )
    ).rows[0];
  } finally {
    await client.end();
  }
}

beforeEach(() => {
  clock = new FakeClock();
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe('a message Telegram took is never sent again because the database did not record it', () => {
  it('writes refused after the send: one card over many ticks, passes back off 5 s (logged once a minute), the sent id recorded within 5 s of writes working again', async () => {
    await boot();
    const record = jest.spyOn(server.app.get(LeadsRepository), 'markPublished');
    refuseWritesOnceSandboxHas(() => cards().length > 0);
    const sentAt = clock.now();
    const id = await submit();
    expect(cardsOf(id)).toHaveLength(1);
    const sent = cardsOf(id)[0];
    expect((await row(id)).published_at).toBeNull();
    expect(record).toHaveBeenCalledTimes(1);
    expect(server.app.get(WriteHealth).failing('outbox')).toMatchObject({ code: READONLY_CODE });

    // Every second for 70 s: the recording is retried every 5 s only, and no tick sends the card again.
    const attemptsAt: number[] = [];
    for (let s = 1; s <= 70; s++) {
      const before = record.mock.calls.length;
      await tickAt(SEC);
      if (record.mock.calls.length > before) attemptsAt.push(s);
      expect(cardsOf(id)).toHaveLength(1);
    }
    expect(attemptsAt).toEqual(Array.from({ length: 14 }, (_, i) => (i + 1) * 5));
    expect(sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(LEADS_CHAT))).toHaveLength(1);
    // 15 failed passes: the 1st and the 13th logged, each one line without a stack.
    const failedLines = server.logger.lines.filter((l) => l.includes('outbox pass failed'));
    expect(failedLines.map((l) => /"failed_passes":(\d+)/.exec(l)?.[1])).toEqual(['1', '13']);
    expect(failedLines.every((l) => !l.includes('    at '))).toBe(true);

    // Writes work again: the next pass (5 s after the last failure) records the message that was sent.
    await allowWrites(server.db);
    await tickAt(4 * SEC);
    expect((await row(id)).published_at).toBeNull();
    await tickAt(1 * SEC);
    expect(await row(id)).toMatchObject({
      published_at: sentAt,
      chat_id: String(LEADS_CHAT),
      message_id: sent.message_id,
      card_format: 'html',
    });
    expect(cardsOf(id)).toHaveLength(1);
    expect((await eventsOf(id)).map((e) => e.kind)).toEqual(['published']);
    expect(server.app.get(WriteHealth).failing('outbox')).toBeNull();
  });

  it('disk full while the probe write still fits: /ready is 503, leads stored meanwhile wait, each card goes out once', async () => {
    await boot();
    // A real SQLITE_FULL cannot be aimed at exactly this write: PRAGMA max_page_count stops writes that need a new
    // page, and marking a lead published rewrites its row in place. So the repository throws the database's own error
    // for two calls, as it does when the disk is full (PostgreSQL's disk_full on PostgreSQL).
    const full = diskFull;
    const record = jest.spyOn(server.app.get(LeadsRepository), 'markPublished');
    record.mockRejectedValueOnce(full()).mockRejectedValueOnce(full());
    const first = await submit();
    expect(cardsOf(first)).toHaveLength(1);

    const res = await ready();
    expect(res.status).toBe(503);
    expect(res.body.checks.database).toEqual({ ok: false, detail: 'storage error in the outbox' });

    // A lead stored during the back-off waits for the next pass, which records the first card before anything else.
    const second = await submit();
    expect(cardsOf(second)).toHaveLength(0);
    await tickAt(5 * SEC);
    expect(record).toHaveBeenCalledTimes(2);
    expect(cardsOf(second)).toHaveLength(0);
    await tickAt(15 * SEC);
    expect(cardsOf(first)).toHaveLength(1);
    expect(cardsOf(second)).toHaveLength(1);
    expect((await row(first)).message_id).toBe(cardsOf(first)[0].message_id);
    expect((await row(second)).message_id).toBe(cardsOf(second)[0].message_id);

    clock.advance(READY_CACHE_MS);
    expect((await ready()).status).toBe(200);
  });

  it('a graceful shutdown tries once more to record what was sent, so the next start does not send it again', async () => {
    await boot();
    refuseWritesOnceSandboxHas(() => cards().length > 0);
    const id = await submit();
    const sent = cardsOf(id)[0];
    expect((await row(id)).message_id).toBeNull();
    await allowWrites(server.db);
    await server.close();
    // A connection of its own: the server's is closed.
    expect(await readAfterClose('select message_id from leads where id = ?', id)).toEqual({ message_id: sent.message_id });
  });

  it('a repeat ping Telegram took but the database did not record is not sent again', async () => {
    await boot();
    const id = await submit({ phone: '+79990005555' });
    clock.advance(MIN);
    refuseWritesOnceSandboxHas(() => pingsOf(id).length > 0);
    await submit({ phone: '+79990005555', guests: '77' });
    expect(pingsOf(id)).toHaveLength(1);
    for (let s = 1; s <= 30; s++) await tickAt(SEC);
    expect(pingsOf(id)).toHaveLength(1);

    await allowWrites(server.db);
    await tickAt(MIN);
    expect(await sqlRow(server.db, 'select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'pinged' });
    expect(pingsOf(id)).toHaveLength(1);
    expect((await eventsOf(id)).map((e) => e.kind)).toEqual(['published', 'repeat_notified']);
  });
});
