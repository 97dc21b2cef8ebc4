/**
 * The real bot (nestjs-telegraf, long polling) against the sandbox: presses and commands arrive as updates through
 * getUpdates. docs/requirements.md §5, §6 and §7; time-based jobs use the fake clock.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_USER, type SandboxUser } from '@stickers/telegram-sandbox';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { HousekeepingScheduler } from '../src/housekeeping/housekeeping.scheduler';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  NO_RATE_LIMITS,
  botLaunched,
  callBotApi,
  lead,
  memberActions,
  postLead,
  publishLead,
  type TestServer,
  sandboxSuite,
} from './harness';
import { itSqliteOnly, onPostgres, sqlRow, sqlRows } from './support/test-database';

const MIN = 60_000;
const PRIVATE_CHAT = 777001;
const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_mgr' };
const { tmp, sandbox, start } = sandboxSuite((s) => s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' }));
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;
let n = 0;

async function boot(env: Record<string, string> = {}, dbPath = join(tmp.dir, `bot-${++n}.sqlite`)) {
  server = await start({ dbPath, sandbox, clock, polling: true, env: { ...NO_RATE_LIMITS, ...env } });
  await botLaunched(sandbox);
  return server;
}

async function newLead(overrides: Record<string, unknown> = {}) {
  const id = (await publishLead(server, overrides)).body.lead_number as number;
  return { id, card: () => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))! };
}

const status = (id: number) => sqlRow<{ status: string }>(server.db, 'select status from leads where id = ?', id);
const buttons = (card: { reply_markup?: { inline_keyboard: { text: string; callback_data?: string }[][] } }) =>
  card.reply_markup!.inline_keyboard[0].map((b) => b.text);

beforeEach(() => {
  clock = new FakeClock();
});

describe('status buttons (requirements §5)', () => {
  it('walks every transition of the table: status line names who and when, buttons follow, history recorded', async () => {
    await boot();
    const { id, card } = await newLead();
    expect(buttons(card())).toEqual(['В работу', 'Спам']);
    const steps: [string, string, string, string[]][] = [
      ['new', 'in_progress', '🛠 В работе', ['Заказ', 'Отказ', 'Спам']],
      ['in_progress', 'won', '✅ Заказ', ['Вернуть в работу']],
      ['won', 'in_progress', '🛠 В работе', ['Заказ', 'Отказ', 'Спам']],
      ['in_progress', 'lost', '❌ Отказ', ['Вернуть в работу']],
      ['lost', 'in_progress', '🛠 В работе', ['Заказ', 'Отказ', 'Спам']],
      ['in_progress', 'spam', '🚫 Спам', ['Не спам']],
      ['spam', 'new', '🆕 Новая', ['В работу', 'Спам']],
      ['new', 'spam', '🚫 Спам', ['Не спам']],
    ];
    for (const [from, to, label, next] of steps) {
      clock.advance(MIN);
      const answer = await press(LEADS_CHAT, card().message_id, `lead:${id}:${from}:${to}`);
      expect(answer).toBe(`Готово: ${label}`);
      expect(await status(id)).toEqual({ status: to });
      expect(card().text).toMatch(new RegExp(`Статус: ${label} — Мария Менеджер, \\d\\d\\.\\d\\d\\.\\d{4} \\d\\d:\\d\\d`));
      expect(buttons(card())).toEqual(next);
    }
    const history = await sqlRows(
      server.db,
      'select from_status, to_status, user_id, user_name from lead_status_changes where lead_id = ? order by id',
      id,
    );
    expect(history).toEqual(
      steps.map(([from, to]) => ({ from_status: from, to_status: to, user_id: DEFAULT_USER.id, user_name: 'Мария Менеджер' })),
    );
  });

  it('two managers at once: one change, the other is told it already changed', async () => {
    await boot();
    const { id, card } = await newLead();
    const [a, b] = await Promise.all([
      press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`, DEFAULT_USER),
      press(LEADS_CHAT, card().message_id, `lead:${id}:new:spam`, OTHER),
    ]);
    const answers = [a, b].sort();
    expect(answers[0]).toMatch(/^Готово: /);
    expect(answers[1]).toMatch(/^Статус уже изменён: /);
    expect(await sqlRow(server.db, 'select count(*) as n from lead_status_changes')).toEqual({ n: 1 });
  });

  it('refuses presses from another chat, from non-managers, with malformed data, for unknown or anonymised leads', async () => {
    await boot({ LEADS_MANAGER_IDS: `${DEFAULT_USER.id}` });
    const { id, card } = await newLead();
    const foreign = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
      chat_id: ADMIN_CHAT,
      text: 'копия',
      reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: `lead:${id}:new:in_progress` }]] },
    });
    expect(await press(ADMIN_CHAT, foreign.message_id, `lead:${id}:new:in_progress`)).toBe(
      'Кнопки карточек работают только в группе заявок.',
    );
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`, OTHER)).toBe(
      'Менять статус заявки могут только менеджеры.',
    );
    for (const data of ['lead:abc', `lead:${id}:new:won`, `lead:${id}:new:bogus`, 'x'.repeat(64)]) {
      expect(await press(LEADS_CHAT, card().message_id, data)).toBe('Неизвестная кнопка.');
    }
    expect(await press(LEADS_CHAT, card().message_id, 'lead:99999:new:in_progress')).toBe('Заявка не найдена.');
    expect(await status(id)).toEqual({ status: 'new' });
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toContain('обезличена');
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`)).toBe('Заявка обезличена: статус больше не меняется.');
    expect(await sqlRow(server.db, 'select count(*) as n from lead_status_changes')).toEqual({ n: 0 });
  });

  it('a lead marked spam by a button stops matching repeats', async () => {
    await boot();
    const first = lead({ phone: '+79995554433' });
    const created = (await postLead(server, first)).body.lead_number;
    await server.outbox.whenIdle();
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${created}\n`))!;
    await press(LEADS_CHAT, card.message_id, `lead:${created}:new:spam`);
    expect(await postLead(server, lead({ phone: '+79995554433' }))).toMatchObject({ status: 201 });
  });
});

describe('commands (requirements §6)', () => {
  it('are registered with setMyCommands', async () => {
    await boot();
    expect(sandbox.state.commands.map((c: any) => c.command)).toEqual([
      'stickers_new',
      'stickers_stats',
      'stickers_forget',
      'stickers_export',
      'stickers_chatid',
      'stickers_inbox',
    ]);
  });

  it('/stickers_new lists leads without a card (error, next attempt) and leads still new, oldest first', async () => {
    await boot();
    const published = await newLead();
    clock.advance(MIN);
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502, description: 'Bad Gateway', count: 1, chat_id: LEADS_CHAT });
    const stuck = await newLead();
    const reply = await command(ADMIN_CHAT, '/stickers_new');
    const lines = reply.split('\n');
    expect(lines[0]).toBe('📭 Без карточки: 1');
    expect(lines[1]).toMatch(new RegExp(`^#${stuck.id} · .* · попыток 1 · ошибка: 502: Bad Gateway · следующая попытка `));
    expect(reply).toContain('🆕 В статусе «Новая»: 2');
    expect(reply.indexOf(`#${published.id} · `, reply.indexOf('«Новая»'))).toBeLessThan(
      reply.indexOf(`#${stuck.id} · `, reply.indexOf('«Новая»')),
    );
    expect(reply).toContain('без карточки');
  });

  it('/stickers_new caps each list with an "and N more" line', async () => {
    await boot();
    for (let i = 0; i < 17; i += 1) await newLead();
    const reply = await command(LEADS_CHAT, '/stickers_new');
    expect(reply).toContain('✅ Все заявки опубликованы.');
    expect(reply).toContain('🆕 В статусе «Новая»: 17');
    expect(reply).toContain('…и ещё 2');
  });

  it('/stickers_stats counts by status for 7 and 30 days, repeats and unpublished', async () => {
    await boot();
    const old = await newLead({ phone: '+79990000001' });
    await press(LEADS_CHAT, old.card().message_id, `lead:${old.id}:new:in_progress`);
    clock.advance(10 * 24 * 60 * MIN);
    const fresh = await newLead({ phone: '+79990000002' });
    await postLead(server, lead({ phone: '+79990000002' }));
    const reply = await command(LEADS_CHAT, '/stickers_stats');
    expect(reply).toContain('За 7 дней: 1\n🆕 Новая: 1\n🛠 В работе: 0');
    expect(reply).toContain('За 30 дней: 2\n🆕 Новая: 1\n🛠 В работе: 1');
    expect(reply).toMatch(/За 7 дней[\s\S]*🔁 Повторных обращений: 1/);
    expect(reply).toContain('📭 Без карточки сейчас: 0');
    // The repeat counted in the last 7 days is the one of the fresh lead.
    expect(await sqlRows(server.db, 'select lead_id from lead_repeats order by id')).toEqual([{ lead_id: fresh.id }]);
  });

  it('/stickers_forget anonymises one lead: fields erased, card rewritten, statistics kept', async () => {
    await boot();
    const { id, card } = await newLead({
      name: 'Зоя Секретная',
      telegram: '@zoya_secret',
      phone: '+79993332211',
      comment: 'тайна',
      guests: '12',
    });
    expect(await command(LEADS_CHAT, '/stickers_forget #' + id)).toBe(
      `🗑 Заявка #${id} обезличена: личные данные удалены, карточка обновлена.`,
    );
    expect(await sqlRow(server.db, 'select name, telegram, phone, comment, ip_hash, guests, status from leads where id = ?', id)).toEqual({
      name: null,
      telegram: null,
      phone: null,
      comment: null,
      ip_hash: null,
      guests: null,
      status: 'new',
    });
    expect(card().text).toContain('🗑 Личные данные удалены');
    expect(card().text).not.toContain('Зоя');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toBe(`Заявка #${id} уже обезличена.`);
    expect(await command(LEADS_CHAT, '/stickers_forget 9999')).toBe('Заявки #9999 нет.');
    expect(await command(LEADS_CHAT, '/stickers_forget')).toBe('Укажите номер заявки: /stickers_forget 42');
    expect(await command(LEADS_CHAT, '/stickers_stats')).toContain('За 7 дней: 1');
  });

  it('answer only in the leads group or the admin chat', async () => {
    await boot();
    expect(await command(PRIVATE_CHAT, '/stickers_stats')).toBe('Команды работают только в группе заявок и в чате админов.');
  });
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
  });

  it('the daily digest goes to the admin chat at LEADS_DIGEST_AT, once per day even across a restart', async () => {
    // 2026-11-29 05:59 UTC = 08:59 in Moscow.
    clock = new FakeClock(Date.UTC(2026, 10, 29, 5, 59));
    const dbPath = join(tmp.dir, `bot-${++n}.sqlite`);
    await boot({}, dbPath);
    // Its text (a photo of the chart follows each: test/digest-picture.test.ts).
    const digests = () => sandbox.messages(ADMIN_CHAT).filter((m) => !m.photo);
    await newLead();
    const scheduler = server.app.get(HousekeepingScheduler);
    await scheduler.tick();
    expect(digests()).toHaveLength(0);
    clock.advance(MIN);
    await Promise.all([scheduler.tick(), scheduler.tick()]);
    expect(digests()).toHaveLength(1);
    expect(digests()[0].text).toContain('🗓 Сводка за сутки: заявок 1');
    await server.close();
    clock.advance(3 * 60 * MIN);
    await boot({}, dbPath);
    await server.app.get(HousekeepingScheduler).tick();
    expect(digests()).toHaveLength(1);
    clock.advance(21 * 60 * MIN);
    await server.app.get(HousekeepingScheduler).tick();
    expect(digests()).toHaveLength(2);
  });

  /** Two leads (one with a repeat) 30 days old and one 1 day old; housekeeping runs once retention is due. */
  async function retentionRun() {
    const dbPath = join(tmp.dir, `retention-${++n}`, 'leads.sqlite');
    await boot({ LEADS_RETENTION_DAYS: '30' }, dbPath);
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
