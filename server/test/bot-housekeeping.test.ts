/**
 * Housekeeping (docs/requirements.md §7) with the real bot against the sandbox, on the fake clock: reminders on cards
 * still new, the daily digest, retention, and pruning of limit records.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { join } from 'node:path';
import { LeaseService } from '../src/cluster/lease.service';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { ReportsService } from '../src/reports/reports.service';
import { SettingsRepository } from '../src/repositories/settings.repository';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  type BootOptions,
  lead,
  memberActions,
  postLead,
  publishLead,
  type TestServer,
  sandboxSuite,
  waitFor,
} from './harness';
import { itSqliteOnly, onPostgres, sqlRow, sqlRows } from './support/test-database';

const MIN = 60_000;
const PRIVATE_CHAT = 777001;
const suite = sandboxSuite((s) => s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' }));
const { tmp, sandbox } = suite;
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;
let n = 0;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, polling: true, ...options }));

async function newLead(overrides: Record<string, unknown> = {}) {
  const id = (await publishLead(server, overrides)).body.lead_number as number;
  return { id, card: () => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))! };
}

beforeEach(() => {
  clock = new FakeClock();
});

describe('housekeeping (once a minute)', () => {
  it('one reminder reply on a card still new after 30 minutes, once per lead, even with two runs at once', async () => {
    await boot();
    const waiting = await newLead();
    const taken = await newLead();
    await press(LEADS_CHAT, taken.card().message_id, `lead:${taken.id}:new:in_progress`);
    const housekeeping = server.app.get(HousekeepingService);
    clock.advance(30 * MIN - 1);
    expect(await housekeeping.remind()).toBe(0);
    clock.advance(1);
    const [a, b] = await Promise.all([housekeeping.remind(), housekeeping.remind()]);
    expect(a + b).toBe(1);
    clock.advance(60 * MIN);
    expect(await housekeeping.remind()).toBe(0);
    const reminders = sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith('⏰'));
    expect(reminders).toHaveLength(1);
    expect(reminders[0]).toMatchObject({
      reply_to_message_id: waiting.card().message_id,
      text: `⏰ Заявка #${waiting.id} ждёт ответа больше 30 мин. Возьмите её в работу.`,
    });
    // A member's reply to the reminder is one to the card: kept with the lead (no visitor to get it here, said so).
    const reply = sandbox.say(LEADS_CHAT, 'Беру', DEFAULT_USER, undefined, { reply_to_message_id: reminders[0].message_id });
    const answer = await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === reply && m.from.is_bot));
    expect(answer.text).toBe('⚠️ Не доставлено посетителю: он ещё не открыл бота по ссылке «Получить ответ в Telegram»');
    expect(await sqlRows(server.db, 'select lead_id, text from lead_messages')).toEqual([{ lead_id: waiting.id, text: 'Беру' }]);
  });

  it('the daily digest goes to the admin chat at LEADS_DIGEST_AT, once per day even across a restart', async () => {
    // 2026-11-29 05:59 UTC = 08:59 in Moscow.
    clock = new FakeClock(Date.UTC(2026, 10, 29, 5, 59));
    const dbPath = join(tmp.dir, `bot-${++n}.sqlite`);
    await boot({ dbPath });
    // Its text (a photo of the chart follows each: test/digest-picture.test.ts).
    const digests = () => sandbox.messages(ADMIN_CHAT).filter((m) => !m.photo);
    await newLead();
    const scheduler = server.app.get(HousekeepingService);
    await scheduler.tick();
    expect(digests()).toHaveLength(0);
    clock.advance(MIN);
    await Promise.all([scheduler.tick(), scheduler.tick()]);
    expect(digests()).toHaveLength(1);
    expect(digests()[0].text).toContain('🗓 Сводка за сутки: заявок 1');
    await server.close();
    clock.advance(3 * 60 * MIN);
    await boot({ dbPath });
    await server.app.get(HousekeepingService).tick();
    expect(digests()).toHaveLength(1);
    clock.advance(21 * 60 * MIN);
    await server.app.get(HousekeepingService).tick();
    expect(digests()).toHaveLength(2);
  });

  it('a digest whose text could not be read (a database error) is tried again the next minute', async () => {
    clock = new FakeClock(Date.UTC(2026, 10, 29, 6, 0)); // 09:00 in Moscow
    await boot();
    await newLead();
    jest.spyOn(server.app.get(ReportsService), 'digest').mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
    const housekeeping = server.app.get(HousekeepingService);
    await expect(housekeeping.digest()).rejects.toThrow('SQLITE_BUSY');
    clock.advance(MIN);
    expect(await housekeeping.digest()).toBe(true);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.text.startsWith('🗓'))).toHaveLength(1);
  });

  it('a run whose lease cannot be read: skipped with a warning while the database is away, an error for anything else', async () => {
    await boot();
    const take = jest.spyOn(server.app.get(LeaseService), 'take');
    take.mockRejectedValueOnce(Object.assign(new Error('no connection to the database'), { code: 'DATABASE_UNREACHABLE' }));
    take.mockRejectedValueOnce(new TypeError('a bug'));
    const housekeeping = server.app.get(HousekeepingService);
    expect((await housekeeping.run()).ran).toBe(false);
    expect((await housekeeping.run()).ran).toBe(false);
    expect(server.logger.lines.filter((l) => l.includes('housekeeping skipped')).map((l) => l.split(' ')[0])).toEqual(['warn', 'error']);
  });

  // An admin group that became a supergroup (topics turned on, made public): every alert and digest was refused with
  // "group chat was upgraded", logged only, and ops heard nothing more. It is followed as the leads group is (§4.5).
  it('an admin chat that became a supergroup: the digest goes there saying to update ADMIN_CHAT_ID, and keeps going there after a restart', async () => {
    clock = new FakeClock(Date.UTC(2026, 10, 29, 6, 0)); // 09:00 in Moscow
    const dbPath = join(tmp.dir, `bot-${++n}.sqlite`);
    await boot({ dbPath });
    await newLead();
    const supergroup = -1009999999998;
    sandbox.migrateChat(ADMIN_CHAT, supergroup);
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    const [text, picture] = sandbox.messages(supergroup);
    expect(text.text).toMatch(
      new RegExp(
        `^ℹ️ Чат оповещений стал супергруппой: новый id ${supergroup} \\(был ${ADMIN_CHAT}\\)\\. .*обновите ADMIN_CHAT_ID\\.\n\n🗓 Сводка за сутки: заявок 1`,
      ),
    );
    expect(picture.photo).toBeTruthy();
    await server.close();
    clock.advance(24 * 60 * MIN);
    await boot({ dbPath });
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    expect(
      sandbox
        .messages(supergroup)
        .filter((m) => !m.photo)
        .map((m) => m.text.slice(0, 2)),
    ).toEqual(['ℹ️', '🗓']);
    // The admin chat's commands are taken there too, before ADMIN_CHAT_ID is updated.
    expect(await command(supergroup, '/stickers_stats')).toContain('📊');
    expect(await command(supergroup, '/stickers_export')).toMatch(/^📎 Выгрузка за 7 дн\./);
  });

  it('the admin chat’s stored id unreadable (a database error): the digest still goes to ADMIN_CHAT_ID', async () => {
    clock = new FakeClock(Date.UTC(2026, 10, 29, 6, 0)); // 09:00 in Moscow
    await boot();
    await newLead();
    jest.spyOn(server.app.get(SettingsRepository), 'get').mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.text.startsWith('🗓'))).toHaveLength(1);
  });

  /** Two leads (one with a repeat) 30 days old and one 1 day old; housekeeping runs once retention is due. */
  async function retentionRun() {
    const dbPath = join(tmp.dir, `retention-${++n}`, 'leads.sqlite');
    await boot({ dbPath, env: { LEADS_RETENTION_DAYS: '30' } });
    const secrets = {
      name: 'Ульяна Удаляемая',
      telegram: '@uliana_erase',
      phone: '+79997776655',
      comment: 'Секретный комментарий',
      client_ip: '203.0.113.99',
    };
    const old = await newLead({ ...secrets, date: '1 мая', guests: '15' });
    await postLead(server, lead({ phone: secrets.phone, name: 'Ульяна Повтор', comment: 'Повторный секрет' }));
    await server.outbox.whenIdle();
    clock.advance(29 * 24 * 60 * MIN);
    const recent = await newLead({ name: 'Свежая Заявка' });
    clock.advance(1 * 24 * 60 * MIN + 1);
    const report = await server.app.get(HousekeepingService).run();
    const values = [
      secrets.name,
      secrets.telegram,
      secrets.telegram.toLowerCase(),
      secrets.phone,
      secrets.comment,
      'Ульяна Повтор',
      'Повторный секрет',
    ];
    return { dbPath, values, old, recent, report };
  }

  it('retention anonymises leads older than LEADS_RETENTION_DAYS: exactly the personal fields, gone from every table', async () => {
    const { values, old, recent, report } = await retentionRun();
    expect(report.anonymised).toBe(1);
    expect(
      await sqlRow(server.db, 'select name, telegram, telegram_key, phone, comment, ip_hash, date, guests from leads where id = ?', old.id),
    ).toEqual({
      name: null,
      telegram: null,
      telegram_key: null,
      phone: null,
      comment: null,
      ip_hash: null,
      date: null,
      guests: null,
    });
    expect(await sqlRow(server.db, 'select name from leads where id = ?', recent.id)).toEqual({ name: 'Свежая Заявка' });
    await server.outbox.tick();
    expect(old.card().text).toContain('🗑 Личные данные удалены');
    const tables = await sqlRows<{ name: string }>(
      server.db,
      onPostgres
        ? 'select tablename as name from pg_tables where schemaname = current_schema() order by tablename'
        : "select name from sqlite_master where type = 'table' order by name",
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['leads', 'lead_repeats', 'lead_events']));
    for (const { name } of tables) {
      const text = JSON.stringify(await sqlRows(server.db, `select * from ${name}`));
      for (const v of values) expect({ table: name, value: v, found: text.includes(v) }).toEqual({ table: name, value: v, found: false });
    }
  });

  itSqliteOnly('retention leaves the personal values in no database file (SQLite only: the bytes of the file and its WAL)', async () => {
    const { dbPath, values, old, report } = await retentionRun();
    expect(report.anonymised).toBe(1);
    await server.outbox.tick();
    expect(old.card().text).toContain('🗑 Личные данные удалены');
    const dir = join(dbPath, '..');
    for (const file of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, file));
      for (const v of values) expect({ file, value: v, found: bytes.includes(Buffer.from(v)) }).toEqual({ file, value: v, found: false });
    }
  });

  it('prunes limit and lockout records older than every window', async () => {
    await boot();
    await postLead(server, lead());
    await postLead(server, lead(), { 'X-Stickers-Leads-Secret': 'wrong' });
    const housekeeping = server.app.get(HousekeepingService);
    clock.advance(60 * MIN - 1);
    expect(await housekeeping.prune()).toBe(0);
    clock.advance(1);
    expect(await housekeeping.prune()).toBe(2);
  });
});
