/**
 * `moveToPostgres` (`npm run leads -- migrate-to-postgres`): a SQLite database with something in every
 * table moves into a real PostgreSQL (test/support/postgres.ts) with every row and id unchanged, new ids continue past
 * the old ones, and a move is refused — changing nothing — when the file is missing or PostgreSQL already holds rows.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Migrator, sql } from 'kysely';
import { type LeadsDb, migrateToLatest, openDatabase, openPostgres } from '../src/database/database';
import { MIGRATIONS } from '../src/database/migrations';
import { moveToPostgres } from '../src/database/move-to-postgres';
import { startPostgres, type TestPostgres } from './support/postgres';
import { migrateToPostgres } from '../src/cli/ops';
import { LeadPagesRepository } from '../src/repositories/lead-pages.repository';
import { TraceService } from '../src/trace/trace.service';
import { captureConsole } from './support/console';

const T = 1_764_000_000_000;
/** Every data table of the schema, each with the column its rows are ordered by. */
const TABLES: Record<string, string> = {
  leads: 'id',
  lead_repeats: 'id',
  lead_events: 'id',
  lead_status_changes: 'id',
  rate_events: 'id',
  rate_minutes: 'minute',
  settings: 'key',
  job_runs: 'key',
  alert_throttles: 'key',
  webhook_sources: 'type',
  webhook_events: 'id',
  outbox: 'id',
  erased_contacts: 'contact_hash',
  telegram_links: 'payload_hash',
  lead_messages: 'id',
  lead_notices: 'message_id',
};

let pg: TestPostgres | undefined;
let dir: string;
const opened: LeadsDb[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), 'leads-move-'));
}, 60_000);
afterAll(async () => {
  for (const db of opened) await db.destroy();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh PostgreSQL database: its URL, and a connection to look at it with. */
async function target(name: string): Promise<{ url: string; db: LeadsDb }> {
  const url = await pg!.createDatabase(name);
  const { db } = openPostgres(url);
  opened.push(db);
  return { url, db };
}

function insert(sqlite: BetterSqlite3.Database, table: string, row: Record<string, unknown>): void {
  const columns = Object.keys(row);
  sqlite.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`).run(row);
}

/**
 * A SQLite database at the latest migration as the server leaves it after a while: published, failing, anonymised
 * and late leads, repeats, status changes, events, rate events (the newest pruned), settings, job runs, throttles.
 */
async function buildSqlite(file: string): Promise<string> {
  const path = join(dir, file);
  const { db, sqlite } = openDatabase(path);
  try {
    await migrateToLatest(db);
    const lead = { created_at: T, received_at: T };
    insert(sqlite, 'leads', {
      ...lead,
      id: 1,
      request_id: 'req-1',
      name: 'Анна',
      telegram: '@Anna_K',
      telegram_key: 'anna_k',
      phone: '+79991234567',
      date: '2026-12-31',
      guests: '10–20',
      comment: 'Кавычки \' " и перевод\nстроки, эмодзи 🎉',
      ip_hash: 'a'.repeat(64),
      status: 'in_progress',
      published_at: T + 1_000,
      chat_id: '-1001234567890',
      message_id: 2_147_483_648,
      card_format: 'html',
      status_changed_by: '@manager',
      status_changed_at: T + 60_000,
      card_dirty_at: T + 60_000,
      reminded_at: T + 1_800_000,
      source_landing: 'wedding',
      utm_source: 'yandex',
      utm_medium: 'cpc',
      utm_campaign: 'лето',
      utm_content: 'banner',
      utm_term: 'стикеры',
      source_referrer: 'yandex.ru',
    });
    // Anonymised: the personal fields are null, the rest stays.
    insert(sqlite, 'leads', {
      ...lead,
      id: 2,
      request_id: 'req-2',
      status: 'won',
      published_at: T + 2_000,
      chat_id: '-1001234567890',
      message_id: 12,
      anonymised_at: T + 86_400_000,
      card_format: 'plain',
    });
    // Not published yet: failing, its retry due later.
    insert(sqlite, 'leads', {
      ...lead,
      id: 3,
      request_id: 'req-3',
      name: 'Boris',
      phone: '+70000000000',
      ip_hash: 'b'.repeat(64),
      last_error: '429: Too Many Requests: retry after 3',
    });
    // Late: replayed from the landing's spool, its fallback message waiting for its reply.
    insert(sqlite, 'leads', {
      ...lead,
      id: 5,
      request_id: 'req-5',
      name: 'Vera',
      telegram: '@vera',
      telegram_key: 'vera',
      received_at: T + 3_600_000,
      late_route: 'fallback',
      late_reason: '503',
      fallback_chat_id: '-1009876543210',
      fallback_message_id: 77,
      fallback_sent_at: T + 5_000,
      fallback_state: 'answer',
      utm_source: 'vk',
    });
    insert(sqlite, 'lead_repeats', {
      id: 1,
      lead_id: 1,
      request_id: 'req-1-again',
      created_at: T + 10_000,
      received_at: T + 10_000,
      changes: JSON.stringify({ comment: 'ещё 5 гостей' }),
      ip_hash: 'a'.repeat(64),
      notified_at: T + 11_000,
      notify_outcome: 'pinged',
      utm_campaign: 'осень',
    });
    insert(sqlite, 'lead_repeats', {
      id: 2,
      lead_id: 5,
      request_id: 'req-5-again',
      created_at: T + 20_000,
      received_at: T + 3_600_500,
      changes: '{}',
      last_error: 'network',
      late_route: 'fallback',
      late_reason: 'timeout',
      fallback_chat_id: '-1009876543210',
      fallback_message_id: 78,
      fallback_sent_at: T + 21_000,
      fallback_state: 'pending',
    });
    insert(sqlite, 'lead_status_changes', {
      lead_id: 1,
      from_status: 'new',
      to_status: 'in_progress',
      user_id: 7_123_456_789,
      user_name: 'Manager',
      at: T + 60_000,
    });
    insert(sqlite, 'lead_status_changes', {
      lead_id: 2,
      from_status: 'new',
      to_status: 'won',
      user_id: 42,
      user_name: 'Boss',
      at: T + 70_000,
    });
    insert(sqlite, 'lead_events', { lead_id: 1, kind: 'published', at: T + 1_000, detail: JSON.stringify({ messageId: 2_147_483_648 }) });
    insert(sqlite, 'lead_events', { lead_id: 1, repeat_id: 1, kind: 'repeat_notified', at: T + 11_000, detail: null });
    insert(sqlite, 'lead_events', { lead_id: 2, kind: 'anonymised', at: T + 86_400_000, detail: null });
    insert(sqlite, 'lead_events', { lead_id: 3, kind: 'publish_failed', at: T + 1_000, detail: JSON.stringify({ error: '429' }) });
    insert(sqlite, 'lead_events', { lead_id: 5, kind: 'received_late', at: T + 3_600_000, detail: JSON.stringify({ route: 'fallback' }) });
    for (let i = 0; i < 4; i += 1) insert(sqlite, 'rate_events', { kind: 'accepted', key_hash: `k${i % 2}`, at: T + i });
    insert(sqlite, 'rate_events', { kind: 'secret_failure', key_hash: 'x', at: T + 9 });
    insert(sqlite, 'rate_minutes', { kind: 'accepted', minute: Math.floor(T / 60_000), n: 4 });
    // Pruned: the newest rate event is gone, but its id (5) was given and is never given again.
    sqlite.prepare('delete from rate_events where id = 5').run();
    insert(sqlite, 'settings', { key: 'digest_chat', value: '-1001234567890', updated_at: T });
    insert(sqlite, 'settings', { key: 'paused', value: JSON.stringify({ until: null }), updated_at: T + 1 });
    insert(sqlite, 'job_runs', { key: 'digest:2026-12-01', at: T });
    insert(sqlite, 'alert_throttles', { key: 'outbox_failing', last_sent_at: T });
    insert(sqlite, 'alert_throttles', { key: 'disk_low', last_sent_at: T + 5 });
    // A recorded erasure (its keyed hash, never the contact).
    insert(sqlite, 'erased_contacts', { contact_hash: 'e'.repeat(64), erased_at: T + 86_400_000 });
    // A "Continue in Telegram" link, used: its payload's hash and the account it bound (a Telegram id beyond 32 bits).
    insert(sqlite, 'telegram_links', {
      payload_hash: 'f'.repeat(64),
      lead_id: 1,
      created_at: T,
      expires_at: T + 7 * 86_400_000,
      used_at: T + 60_000,
      tg_user_id: 7_000_000_001,
      tg_username: 'anna_k',
      tg_first_name: 'Анна',
      tg_last_name: null,
    });
    // A message of the lead's conversation, relayed into the group (Telegram ids beyond 32 bits).
    insert(sqlite, 'lead_messages', {
      id: 1,
      lead_id: 1,
      direction: 'in',
      author_tg_id: 7_000_000_001,
      author_name: 'Анна (@anna_k)',
      at: T + 120_000,
      text: 'Можно на 30 гостей?',
      media: null,
      tg_chat_id: '7000000001',
      tg_message_id: 5,
      copy_chat_id: '-1001234567890',
      copy_message_id: 2_147_483_649,
      state: 'delivered',
      error: null,
    });
    // The repeat's ping under the card: a reply to it is one to the card.
    insert(sqlite, 'lead_notices', { chat_id: '-1001234567890', message_id: 2_147_483_650, lead_id: 1 });
    // Webhooks: where announcements start, two events, a delivered delivery and two still waiting.
    for (const [type, since_id] of [
      ['lead.created', 0],
      ['lead.repeat', 0],
      ['lead.status_changed', 0],
      ['lead.anonymised', 2],
    ] as const)
      insert(sqlite, 'webhook_sources', { type, since_id, created_at: T });
    insert(sqlite, 'webhook_events', {
      public_id: `evt_${'1'.repeat(32)}`,
      lead_id: 1,
      type: 'lead.created',
      source_id: 1,
      at: T,
      data: '{}',
    });
    insert(sqlite, 'webhook_events', {
      public_id: `evt_${'2'.repeat(32)}`,
      lead_id: 2,
      type: 'lead.anonymised',
      source_id: 3,
      at: T + 86_400_000,
      data: JSON.stringify({ reason: 'retention' }),
    });
    const delivery = { kind: 'webhook', lead_id: 1, event_id: 1, created_at: T, next_at: T };
    insert(sqlite, 'outbox', { ...delivery, target: 'https://crm.example.com/hooks', attempts: 1, done_at: T + 1, outcome: 'delivered' });
    insert(sqlite, 'outbox', {
      ...delivery,
      target: 'https://backup.example.com/hooks',
      attempts: 5,
      next_at: T + 900_000,
      first_failed_at: T,
      last_error: 'HTTP 503',
      claimed_by: 'host:1:2:abc',
      claimed_until: T + 60_000,
    });
    insert(sqlite, 'outbox', {
      kind: 'webhook',
      lead_id: 2,
      event_id: 2,
      target: 'https://crm.example.com/hooks',
      created_at: T,
      next_at: T,
      replayed_at: T,
    });
  } finally {
    await db.destroy();
  }
  return path;
}

/** Every row of every table, ordered by its key: from SQLite as stored, from PostgreSQL through `openPostgres`. */
function dumpSqlite(path: string): Record<string, unknown[]> {
  const sqlite = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      Object.entries(TABLES).map(([table, key]) => [table, sqlite.prepare(`select * from ${table} order by ${key}`).all()]),
    );
  } finally {
    sqlite.close();
  }
}

async function dumpPostgres(db: LeadsDb): Promise<Record<string, unknown[]>> {
  const dump: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(TABLES)) {
    dump[table] = (await sql`select * from ${sql.table(table)} order by ${sql.id(key)}`.execute(db)).rows;
  }
  return dump;
}

describe('moveToPostgres', () => {
  it('copies every table with every row, column and id unchanged, in one go, and new ids continue past the old ones', async () => {
    const path = await buildSqlite('full.sqlite');
    const source = dumpSqlite(path);
    for (const [table, rows] of Object.entries(source)) expect([table, rows.length > 0]).toEqual([table, true]);
    const { url, db } = await target('full');
    const lines: string[] = [];

    // Batches of 2: most tables take several inserts.
    const report = await moveToPostgres(path, url, { log: (line) => lines.push(line), batchSize: 2 });

    expect(report.migrated).toEqual({ sqlite: [], postgres: Object.keys(MIGRATIONS) });
    // Referenced tables first, every table of the schema (the test's list is checked against what the move found).
    expect(report.tables.map((t) => t.table)).toEqual([
      'alert_throttles',
      'erased_contacts',
      'job_runs',
      'leads',
      'lead_events',
      'lead_messages',
      'lead_notices',
      'lead_repeats',
      'lead_status_changes',
      'rate_events',
      'rate_minutes',
      'settings',
      'telegram_links',
      'webhook_events',
      'outbox',
      'webhook_sources',
    ]);
    expect(Object.fromEntries(report.tables.map((t) => [t.table, [t.rows, t.nextId]]))).toEqual({
      leads: [4, 6],
      lead_repeats: [2, 3],
      lead_events: [5, 6],
      lead_messages: [1, 2],
      lead_notices: [1, null],
      lead_status_changes: [2, 3],
      rate_events: [4, 6],
      rate_minutes: [1, null],
      settings: [2, null],
      job_runs: [1, null],
      alert_throttles: [2, null],
      erased_contacts: [1, null],
      telegram_links: [1, null],
      webhook_events: [2, 3],
      outbox: [7, 8],
      webhook_sources: [4, null],
    });
    expect(lines).toEqual([
      `SQLite ${path}: migrations current`,
      `PostgreSQL: migrated (${Object.keys(MIGRATIONS).join(', ')})`,
      'alert_throttles: 2 rows',
      'erased_contacts: 1 row',
      'job_runs: 1 row',
      'leads: 4 rows, next id 6',
      'lead_events: 5 rows, next id 6',
      'lead_messages: 1 row, next id 2',
      'lead_notices: 1 row',
      'lead_repeats: 2 rows, next id 3',
      'lead_status_changes: 2 rows, next id 3',
      'rate_events: 4 rows, next id 6',
      'rate_minutes: 1 row',
      'settings: 2 rows',
      'telegram_links: 1 row',
      'webhook_events: 2 rows, next id 3',
      'outbox: 7 rows, next id 8',
      'webhook_sources: 4 rows',
    ]);

    // Identical, column by column: integers as numbers (beyond 32 bits too), text (JSON included) as text, nulls as nulls.
    expect(await dumpPostgres(db)).toEqual(source);

    // The story of every moved lead reads the same from either database (`npm run leads -- trace`).
    const sqliteDb = openDatabase(path).db;
    opened.push(sqliteDb);
    for (const lead of source.leads as { id: number }[]) {
      const key = String(lead.id);
      expect(await new TraceService(new LeadPagesRepository(db)).read(key)).toEqual(
        await new TraceService(new LeadPagesRepository(sqliteDb)).read(key),
      );
    }

    // The next lead takes the next number; the next rate event does not reuse the pruned one's id.
    const { id } = await db.insertInto('leads').values({ request_id: 'req-new', created_at: T }).returning('id').executeTakeFirstOrThrow();
    expect(id).toBe(6);
    const event = await db
      .insertInto('rate_events')
      .values({ kind: 'accepted', key_hash: 'k', at: T })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(event.id).toBe(6);

    // A second move into the same database is refused and changes nothing there.
    const before = await dumpPostgres(db);
    await expect(moveToPostgres(path, url)).rejects.toThrow(
      'the PostgreSQL database already holds rows (in alert_throttles, erased_contacts, job_runs, lead_events, lead_messages, lead_notices, lead_repeats, ' +
        'lead_status_changes, leads, outbox, rate_events, rate_minutes, settings, telegram_links, webhook_events, webhook_sources): refusing to merge into or overwrite it',
    );
    expect(await dumpPostgres(db)).toEqual(before);
  });

  it('migrates an older SQLite database first, and keeps batches within PostgreSQL’s 65535 bind parameters', async () => {
    const path = join(dir, 'old.sqlite');
    const { db: lite, sqlite } = openDatabase(path);
    // A database from before the latest migration, as a server not updated yet leaves it.
    const names = Object.keys(MIGRATIONS);
    const { error } = await new Migrator({ db: lite, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(
      names[names.length - 2],
    );
    expect(error).toBeUndefined();
    const add = sqlite.prepare('insert into leads (request_id, created_at) values (?, ?)');
    // 2000 leads of 42 columns are 84000 parameters: one insert would be refused.
    sqlite.transaction(() => {
      for (let i = 0; i < 2000; i += 1) add.run(`req-${i}`, T + i);
    })();
    await lite.destroy();
    const { url, db } = await target('batches');

    const report = await moveToPostgres(path, url, { batchSize: 100_000 });

    expect(report.migrated.sqlite).toEqual([names[names.length - 1]]);
    expect(report.tables.find((t) => t.table === 'leads')).toEqual({ table: 'leads', rows: 2000, nextId: 2001 });
    expect(await dumpPostgres(db)).toEqual(dumpSqlite(path));
  });

  it('copies one snapshot: rows the running server writes during the move are not half-copied', async () => {
    const path = await buildSqlite('live.sqlite');
    const snapshot = dumpSqlite(path);
    const { url, db } = await target('live');
    const server = new BetterSqlite3(path);
    // Once the first table is in PostgreSQL (the snapshot is taken), the "server" stores a lead and its event.
    const write = () => {
      insert(server, 'leads', { id: 6, request_id: 'req-during', created_at: T });
      insert(server, 'lead_events', { lead_id: 6, kind: 'published', at: T });
    };
    try {
      await moveToPostgres(path, url, { log: (line) => line.startsWith('alert_throttles:') && write(), batchSize: 1 });
    } finally {
      server.close();
    }

    expect(await dumpPostgres(db)).toEqual(snapshot);
    expect(dumpSqlite(path).leads).toHaveLength(snapshot.leads.length + 1);
  });

  it('npm run leads -- migrate-to-postgres: moves the file, prints one line per table and the next lead number', async () => {
    const path = await buildSqlite('cli.sqlite');
    const { url } = await target('cli');
    const moved = await captureConsole(() => migrateToPostgres(path, url));
    expect(moved).toMatchObject({ result: 0, error: [] });
    expect(moved.log).toContain('leads: 4 rows, next id 6');
    expect(moved.log.at(-1)).toMatch(
      new RegExp(
        `^moved \\d+ rows in ${Object.keys(TABLES).length} tables to postgres://postgres@127\\.0\\.0\\.1:\\d+/[a-z_0-9]+: 4 leads, the next lead is #6\\.`,
      ),
    );
  });

  it('refuses a missing SQLite file, and does not create it', async () => {
    const path = join(dir, 'missing', 'leads.sqlite');
    await expect(moveToPostgres(path, 'postgres://postgres@127.0.0.1:1/none')).rejects.toThrow(
      `no SQLite database at ${path} (set DATABASE_PATH): nothing to move`,
    );
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('refuses a PostgreSQL database with a row in any table, a lead or not', async () => {
    const path = await buildSqlite('refused.sqlite');
    const { url, db } = await target('settings_only');
    await migrateToLatest(db);
    await db.insertInto('settings').values({ key: 'k', value: 'v', updated_at: T }).execute();

    await expect(moveToPostgres(path, url)).rejects.toThrow(
      'the PostgreSQL database already holds rows (in settings): refusing to merge into or overwrite it; move into a new, empty database',
    );
    expect(await dumpPostgres(db)).toEqual({ ...emptyDump(), settings: [{ key: 'k', value: 'v', updated_at: T }] });
  });

  it('refuses another application’s database (a table that is not the leads’) before creating anything in it', async () => {
    const path = await buildSqlite('wrong-url.sqlite');
    const { url, db } = await target('shop');
    await sql`create table customers (id int primary key, email text)`.execute(db);

    await expect(moveToPostgres(path, url)).rejects.toThrow(
      "the PostgreSQL database has tables that are not the leads' (customers): nothing was moved",
    );
    const { rows } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = current_schema()
    `.execute(db);
    expect(rows.map((r) => r.name)).toEqual(['customers']);
  });

  it('copies all or nothing: a value PostgreSQL refuses rolls back the tables copied before it', async () => {
    const path = await buildSqlite('bad.sqlite');
    const sqlite = new BetterSqlite3(path);
    // SQLite keeps text in an integer column; PostgreSQL's bigint refuses it (leads are copied after alert_throttles).
    sqlite.prepare(`update leads set reminded_at = 'yesterday' where id = 3`).run();
    sqlite.close();
    const { url, db } = await target('all_or_nothing');

    await expect(moveToPostgres(path, url)).rejects.toThrow(/invalid input syntax for type bigint: "yesterday"/);
    expect(await dumpPostgres(db)).toEqual(emptyDump());
    // Nothing was half-done: once the value is fixed, the move goes through.
    const fix = new BetterSqlite3(path);
    fix.prepare('update leads set reminded_at = null where id = 3').run();
    fix.close();
    await moveToPostgres(path, url);
    expect(await dumpPostgres(db)).toEqual(dumpSqlite(path));
  });

  it('refuses a SQLite table that PostgreSQL has no table for', async () => {
    const path = await buildSqlite('extra.sqlite');
    const sqlite = new BetterSqlite3(path);
    sqlite.exec(`create table notes (id integer primary key, body text); insert into notes (body) values ('x')`);
    sqlite.close();
    const { url, db } = await target('extra');

    await expect(moveToPostgres(path, url)).rejects.toThrow(
      'the PostgreSQL database has no table notes (a table of the SQLite database): nothing was moved',
    );
    expect(await dumpPostgres(db)).toEqual(emptyDump());
  });
});

function emptyDump(): Record<string, unknown[]> {
  return Object.fromEntries(Object.keys(TABLES).map((table) => [table, []]));
}
