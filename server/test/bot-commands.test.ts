/**
 * The real bot (nestjs-telegraf, long polling) against the sandbox: commands (docs/requirements.md §6) arrive as
 * updates through getUpdates; who may anonymise a lead with and without a manager list.
 */
import { DEFAULT_USER, type SandboxUser } from '@stickers/telegram-sandbox';
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
} from './harness';
import { sqlRow, sqlRows } from './support/test-database';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { ReportsService } from '../src/reports/reports.service';

const MIN = 60_000;
const PRIVATE_CHAT = 777001;
const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_mgr' };
const suite = sandboxSuite((s) => s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' }));
const THIRD: SandboxUser = { id: 503, is_bot: false, first_name: 'Ира', username: 'ira_admin_chat' };
const NOT_ADMIN = 'Обезличивать заявки могут только администраторы группы заявок.';
const { sandbox } = suite;
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, polling: true, ...options }));

async function newLead(overrides: Record<string, unknown> = {}) {
  const id = (await publishLead(server, overrides)).body.lead_number as number;
  return { id, card: () => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))! };
}

const row = async (id: number) =>
  (await sqlRow<{ status: string; name: string | null; phone: string | null; anonymised_at: number | null }>(
    server.db,
    'select status, name, phone, anonymised_at from leads where id = ?',
    id,
  ))!;

beforeEach(() => {
  clock = new FakeClock();
});

describe('commands (requirements §6)', () => {
  it("are registered with setMyCommands for groups; a private chat, where visitors write, lists none (an older version's list for all is deleted)", async () => {
    sandbox.state.commandScopes.set('default', [{ command: 'stickers_new', description: 'as an older version set it' }]);
    await boot();
    expect(sandbox.state.commands.map((c: any) => c.command)).toEqual([
      'stickers_new',
      'stickers_stats',
      'stickers_forget',
      'stickers_export',
      'stickers_chatid',
      'stickers_inbox',
    ]);
    expect(sandbox.callsOf('setMyCommands').map((c) => c.params.scope)).toEqual([{ type: 'all_group_chats' }]);
    expect(sandbox.state.privateCommands(PRIVATE_CHAT)).toEqual([]);
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

  it("an answer longer than Telegram's 4,096 characters still comes, cut with …", async () => {
    await boot();
    const lines = Array.from({ length: 60 }, (_, i) => `#${100_000 + i} · ${'ошибка: 502: Bad Gateway '.repeat(3)}`);
    jest.spyOn(server.app.get(ReportsService), 'newLeads').mockResolvedValueOnce(lines.join('\n'));
    const reply = await command(ADMIN_CHAT, '/stickers_new');
    expect([reply.length, reply.startsWith('#100000 · '), reply.endsWith('…')]).toEqual([4096, true, true]);
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
    // Every form the command takes, also to whoever tried a phone or a username that is none.
    const usage = `Укажите, кого обезличить: номер заявки (/stickers_forget 42), телефон (/stickers_forget +7 916 555-12-34) или ник (/stickers_forget @anna_k).`;
    // Numbers start at 1: #0 is no lead's number, as for the trace and `webhooks replay`.
    for (const args of ['', '#0', '+7 999 12', '@ab', 'Зоя'])
      expect(await command(LEADS_CHAT, `/stickers_forget ${args}`.trim())).toBe(usage);
    expect(await command(LEADS_CHAT, '/stickers_stats')).toContain('За 7 дней: 1');
  });

  it('answer only in the leads group or the admin chat', async () => {
    await boot();
    expect(await command(PRIVATE_CHAT, '/stickers_stats')).toBe('Команды работают только в группе заявок и в чате админов.');
  });
});

describe('a command the server cannot carry out is still answered', () => {
  it('/stickers_forget while the database cannot be written: "not carried out, send it again"; sent again, it is done', async () => {
    await boot();
    const { id } = await newLead();
    const erasure = server.app.get(AnonymisationService);
    jest.spyOn(erasure, 'forget').mockRejectedValueOnce(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toBe(
      '⚠️ Команда не выполнена: сервер заявок не смог прочитать или записать базу. Повторите её через минуту.',
    );
    expect((await row(id)).anonymised_at).toBeNull();
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toBe(
      `🗑 Заявка #${id} обезличена: личные данные удалены, карточка обновлена.`,
    );
  });
});

describe('/stickers_forget without LEADS_MANAGER_IDS: only administrators of the leads group', () => {
  it('a plain member is refused and the lead is intact; once made an administrator, the same member may', async () => {
    await boot();
    const { id, card } = await newLead({ name: 'Пётр Тайный', phone: '+79991112233' });
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, OTHER)).toBe(NOT_ADMIN);
    expect(await row(id)).toMatchObject({ name: 'Пётр Тайный', phone: '+79991112233', anonymised_at: null });
    expect(card().text).toContain('Пётр Тайный');

    sandbox.setMember(LEADS_CHAT, OTHER, 'administrator');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, OTHER)).toBe(
      `🗑 Заявка #${id} обезличена: личные данные удалены, карточка обновлена.`,
    );
    expect(await row(id)).toMatchObject({ name: null, phone: null });
    expect(card().text).not.toContain('Пётр Тайный');
  });

  it('an administrator of the admin chat who is not one of the leads group is refused there too', async () => {
    await boot();
    const { id } = await newLead();
    sandbox.setMember(ADMIN_CHAT, THIRD, 'administrator');
    expect(await command(ADMIN_CHAT, `/stickers_forget ${id}`, THIRD)).toBe(NOT_ADMIN);
    expect((await row(id)).anonymised_at).toBeNull();
    // The group's creator may, from either chat.
    expect(await command(ADMIN_CHAT, `/stickers_forget ${id}`, DEFAULT_USER)).toContain('обезличена');
  });

  it('when Telegram cannot say who is an administrator, the answer is "try later", never yes', async () => {
    await boot();
    const { id } = await newLead();
    sandbox.inject({ method: 'getChatMember', kind: 'server_error', status: 502, description: 'Bad Gateway' });
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, DEFAULT_USER)).toBe(
      'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.',
    );
    expect((await row(id)).anonymised_at).toBeNull();
    expect(server.logger.lines.some((l) => l.startsWith('warn') && l.includes('administrator check failed'))).toBe(true);
  });

  it('an anonymous administrator is told to write as themselves: nobody can be checked, so nothing is erased', async () => {
    await boot();
    const { id } = await newLead();
    const anonymous: SandboxUser = { id: 1087968824, is_bot: true, first_name: 'Group', username: 'GroupAnonymousBot' };
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, anonymous)).toBe(
      'Бот не знает, кто вы: вы пишете как анонимный администратор. Отключите «Анонимность» в своих правах администратора и повторите.',
    );
    expect((await row(id)).anonymised_at).toBeNull();
  });

  it('status buttons stay open to every member', async () => {
    await boot();
    const { id, card } = await newLead();
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`, OTHER)).toBe('Готово: 🛠 В работе');
  });
});

describe('/stickers_forget with LEADS_MANAGER_IDS: the list decides', () => {
  it('a listed plain member may, an unlisted administrator may not, and Telegram is not asked', async () => {
    await boot({ env: { LEADS_MANAGER_IDS: String(OTHER.id) } });
    const { id } = await newLead();
    sandbox.setMember(LEADS_CHAT, THIRD, 'administrator');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, THIRD)).toBe('Обезличивать заявки могут только менеджеры.');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, DEFAULT_USER)).toBe('Обезличивать заявки могут только менеджеры.');
    expect((await row(id)).anonymised_at).toBeNull();
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, OTHER)).toContain('обезличена');
    expect(sandbox.callsOf('getChatMember')).toHaveLength(0);
  });
});
