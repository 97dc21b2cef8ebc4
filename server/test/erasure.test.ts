/**
 * Erasure by contact: `/stickers_forget +7…` / `@name` and `npm run leads -- forget` erase every lead and
 * repeat of one person and nobody else's, with the values gone from every database file and the cards rewritten.
 * Anonymisation erases the values even while a reader holds the database (an online backup, a pg_dump snapshot).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Client } from 'pg';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { LEAD_ANONYMISED, type LeadAnonymisedEvent } from '../src/domain/events';
import { forget } from '../src/cli/ops';
import {
  FakeClock,
  LEADS_CHAT,
  SALT,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  startServer,
  tempDir,
  waitFor,
  type TestServer,
} from './harness';
import { describePostgresOnly, describeSqliteOnly, onPostgres, sqlRow, sqlRows } from './support/test-database';
import { captureConsole } from './support/console';

const DAY = 24 * 60 * 60 * 1000;
const suite = sandboxSuite();
const { tmp, sandbox } = suite;
const { command } = memberActions(sandbox);
let n = 0;

const boot = (dbPath: string): Promise<TestServer> => suite.boot({ dbPath, clock: new FakeClock(), polling: true });

async function store(server: TestServer, overrides: Record<string, unknown>): Promise<number> {
  const res = await postLead(server, lead(overrides));
  expect([200, 201]).toContain(res.status);
  await server.outbox.whenIdle();
  return res.body.lead_number as number;
}

const row = async (server: TestServer, id: number) =>
  (await sqlRow(
    server.db,
    'select name, telegram, telegram_key, phone, comment, ip_hash, guests, anonymised_at from leads where id = ?',
    id,
  ))!;
const card = (id: number) => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;

/**
 * The values are in no database file in `dir` (SQLite: the file and its WAL). On PostgreSQL, where the files are the
 * server's own, in no row of any table.
 */
async function expectNowhere(server: TestServer, dir: string, values: string[]): Promise<void> {
  if (onPostgres) {
    const tables = await sqlRows<{ table_name: string }>(
      server.db,
      "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['leads', 'lead_repeats', 'lead_events']));
    for (const { table_name: table } of tables) {
      for (const { r } of await sqlRows<{ r: string }>(server.db, `select t::text as r from "${table}" t`)) {
        for (const v of values) expect({ table, value: v, found: r.includes(v) }).toEqual({ table, value: v, found: false });
      }
    }
    return;
  }
  for (const file of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, file));
    for (const v of values) expect({ file, value: v, found: bytes.includes(Buffer.from(v)) }).toEqual({ file, value: v, found: false });
  }
}

/** Three leads of one person (days apart, so none is a repeat), a repeat of the last one, and someone else's lead. */
async function person(server: TestServer, phone: string, telegram: string) {
  const ids: number[] = [];
  ids.push(await store(server, { phone, telegram, name: 'Пётр Стираемый', comment: 'первый секрет' }));
  server.clock.advance(2 * DAY);
  ids.push(await store(server, { phone, name: 'Пётр Второй', comment: 'второй секрет' }));
  server.clock.advance(2 * DAY);
  ids.push(await store(server, { phone: '+79990000001', telegram, name: 'Пётр Третий', comment: 'третий секрет' }));
  // A repeat of the third lead (same username within 24 h) that carries the phone in its changes.
  expect(await store(server, { phone, telegram, name: 'Пётр Повтор', comment: 'секрет повтора' })).toBe(ids[2]);
  const other = await store(server, { name: 'Чужая Заявка', comment: 'чужой комментарий' });
  return { ids, other };
}

describe('erasure by contact', () => {
  it('/stickers_forget +7… erases the three leads of one person and their repeat, nobody else, in every database file', async () => {
    const dbPath = join(tmp.dir, `erase-${++n}`, 'leads.sqlite');
    const server = await boot(dbPath);
    const events: LeadAnonymisedEvent[] = [];
    server.app.get(EventEmitter2).on(LEAD_ANONYMISED, (e: LeadAnonymisedEvent) => events.push(e));
    const phone = '+79995554433';
    const { ids, other } = await person(server, phone, '@Petr_Erase');
    const reply = await command(LEADS_CHAT, '/stickers_forget +7 (999) 555-44-33');
    expect(reply).toBe(`🗑 Обезличено заявок: 3 (#${ids.join(', #')}): личные данные удалены, карточки обновлены.`);
    for (const id of ids) {
      expect(await row(server, id)).toMatchObject({
        name: null,
        telegram: null,
        telegram_key: null,
        phone: null,
        comment: null,
        ip_hash: null,
        guests: null,
      });
      expect(card(id).text).toContain('🗑 Личные данные удалены');
    }
    expect(await row(server, other)).toMatchObject({ name: 'Чужая Заявка', comment: 'чужой комментарий', anonymised_at: null });
    expect(events.map((e) => [e.leadNumber, e.reason])).toEqual(ids.map((id) => [id, 'contact']));
    await expectNowhere(server, join(dbPath, '..'), [
      phone,
      'Пётр Стираемый',
      'Пётр Второй',
      'Пётр Третий',
      'Пётр Повтор',
      'секрет повтора',
      '@Petr_Erase',
      '@petr_erase',
    ]);
    expect(await command(LEADS_CHAT, `/stickers_forget ${phone}`)).toBe('Заявок с таким контактом не найдено: никто не обезличен.');
  });

  it('/stickers_forget of a contact with many leads lists the first 30 numbers, then how many more', async () => {
    const server = await boot(join(tmp.dir, `erase-${++n}.sqlite`));
    const ids: number[] = [];
    for (let i = 0; i < 32; i += 1) {
      ids.push(await store(server, { phone: '+79995554411', telegram: `@many_${i}x` }));
      server.clock.advance(2 * DAY);
    }
    const reply = await command(LEADS_CHAT, '/stickers_forget +79995554411');
    const listed = ids.slice(0, 30).map((id) => `#${id}`);
    expect(reply).toBe(`🗑 Обезличено заявок: 32 (${listed.join(', ')} …и ещё 2): личные данные удалены, карточки обновлены.`);
  });

  it('/stickers_forget @username erases by the lower-cased username; the number form keeps working', async () => {
    const server = await boot(join(tmp.dir, `erase-${++n}.sqlite`));
    const { ids, other } = await person(server, '+79995554400', '@Petr_Name');
    const reply = await command(LEADS_CHAT, '/stickers_forget @petr_NAME');
    // The second lead has another username and no repeat with this one: it is not matched by the username.
    expect(reply).toBe(`🗑 Обезличено заявок: 2 (#${ids[0]}, #${ids[2]}): личные данные удалены, карточки обновлены.`);
    expect(await row(server, ids[1])).toMatchObject({ name: 'Пётр Второй' });
    expect((await row(server, other)).name).toBe('Чужая Заявка');
    expect(await command(LEADS_CHAT, '/stickers_forget @nobody_here')).toBe('Заявок с таким контактом не найдено: никто не обезличен.');
    expect(await command(LEADS_CHAT, `/stickers_forget ${ids[1]}`)).toContain('обезличена');
  });

  it('npm run leads -- forget --phone erases beside the running server; its outbox rewrites the cards', async () => {
    const dbPath = join(tmp.dir, `erase-${++n}`, 'leads.sqlite');
    const server = await boot(dbPath);
    const phone = '+79995554411';
    const { ids, other } = await person(server, phone, '@Petr_Cli');
    // The server's database: the file, or the PostgreSQL database (DATABASE_URL) that stands for it.
    const location = server.config.databaseUrl ?? dbPath;
    const erased = await captureConsole(() => forget(location, '--phone', '+7 999 555 44 11', server.clock.now(), SALT));
    expect(erased).toMatchObject({ result: 0, error: [] });
    expect(erased.log).toEqual([`🗑 erased 3 leads (#${ids.join(', #')}); cards are rewritten by the server`]);
    expect(await captureConsole(() => forget(location, '--telegram', 'petr_cli', server.clock.now(), SALT))).toMatchObject({
      result: 1,
      error: [],
    });
    for (const id of ids) expect(await row(server, id)).toMatchObject({ name: null, phone: null, comment: null });
    expect((await row(server, other)).name).toBe('Чужая Заявка');
    await server.outbox.tick();
    for (const id of ids) expect(card(id).text).toContain('🗑 Личные данные удалены');
    await expectNowhere(server, join(dbPath, '..'), [phone, 'Пётр Стираемый', 'Пётр Повтор', 'секрет повтора']);
  });
});

describe('anonymisation while a reader holds the database', () => {
  const tmp = tempDir();
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });
  afterAll(() => tmp.remove());

  function filesHolding(dir: string, value: string): string[] {
    return readdirSync(dir).filter((f) => existsSync(join(dir, f)) && readFileSync(join(dir, f)).includes(Buffer.from(value)));
  }

  describeSqliteOnly('anonymisation while a reader holds the WAL (SQLite only: the WAL and its checkpoint)', () => {
    it('the erased values leave every database file once the reader (an online backup) lets go', async () => {
      const dir = join(tmp.dir, 'reader');
      const dbPath = join(dir, 'leads.sqlite');
      server = await startServer({ dbPath });
      const name = 'Зинаида Стираемая';
      const res = await postLead(server, lead({ name }));
      expect(res.status).toBe(201);
      const id = res.body.lead_number as number;

      // A reader with an open snapshot, as a backup has: the truncating checkpoint cannot go through meanwhile.
      const reader = new BetterSqlite3(dbPath, { readonly: true });
      reader.exec('begin');
      reader.prepare('select count(*) from leads').get();
      try {
        expect(await server.app.get(AnonymisationService).forget(id)).toBe('done');
        expect(filesHolding(dir, name)).not.toEqual([]);
      } finally {
        reader.exec('commit');
        reader.close();
      }
      await waitFor(() => filesHolding(dir, name).length === 0, 5000, 'the name gone from every database file');
    });
  });

  describePostgresOnly('anonymisation while a reader holds a snapshot (PostgreSQL)', () => {
    it('a reader with an open snapshot (as pg_dump has) does not hold the erase off; no row holds the values for a new reader', async () => {
      server = await startServer({ dbPath: join(tmp.dir, 'pg-reader', 'leads.sqlite') });
      const name = 'Зинаида Стираемая';
      const res = await postLead(server, lead({ name }));
      expect(res.status).toBe(201);
      const id = res.body.lead_number as number;
      /** The tables with a row that holds `value`, for a new reader. */
      const rowsHolding = async (value: string) => {
        const tables = await sqlRows<{ table_name: string }>(
          server!.db,
          "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
        );
        const found: string[] = [];
        for (const { table_name: table } of tables) {
          for (const { r } of await sqlRows<{ r: string }>(server!.db, `select t::text as r from "${table}" t`))
            if (r.includes(value)) found.push(table);
        }
        return found;
      };
      expect(await rowsHolding(name)).toEqual(['leads']);

      const reader = new Client({ connectionString: server.config.databaseUrl! });
      await reader.connect();
      try {
        await reader.query('begin isolation level repeatable read');
        await reader.query('select count(*) from leads');
        expect(await server.app.get(AnonymisationService).forget(id)).toBe('done');
        // The reader's snapshot still sees the values; nobody else does.
        expect((await reader.query('select name from leads where id = $1', [id])).rows).toEqual([{ name }]);
        expect(await rowsHolding(name)).toEqual([]);
      } finally {
        await reader.query('commit');
        await reader.end();
      }
    });
  });
});
