/**
 * The bot against the sandbox where things go wrong: a card that cannot be rewritten, a button on a card that is not
 * the lead's, and who may anonymise a lead when no manager list is set.
 */
import { join } from 'node:path';
import { DEFAULT_USER, type Fault, type SandboxUser } from '@stickers/telegram-sandbox';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  NO_RATE_LIMITS,
  botLaunched,
  memberActions,
  publishLead,
  waitFor,
  type TestServer,
  sandboxSuite,
} from './harness';
import { sqlRow } from './support/test-database';

const MIN = 60_000;
const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_member' };
const THIRD: SandboxUser = { id: 503, is_bot: false, first_name: 'Ира', username: 'ira_admin_chat' };
const STALE = 'Эта карточка устарела: её кнопки больше не меняют статус.';
const NOT_ADMIN = 'Обезличивать заявки могут только администраторы группы заявок.';
const EDIT_FAILS: Omit<Fault, 'remaining'> = {
  method: 'editMessageText',
  kind: 'server_error',
  status: 502,
  description: 'Bad Gateway',
  chat_id: LEADS_CHAT,
};
const { tmp, sandbox, start } = sandboxSuite();
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;
let n = 0;

async function boot(env: Record<string, string> = {}, dbPath = join(tmp.dir, `hardening-${++n}.sqlite`)) {
  server = await start({ dbPath, sandbox, clock, polling: true, env: { ...NO_RATE_LIMITS, ...env } });
  await botLaunched(sandbox);
  return server;
}

async function newLead(overrides: Record<string, unknown> = {}) {
  const id = (await publishLead(server, overrides)).body.lead_number as number;
  // The newest card with this number: after a database is replaced, an older card may carry the same one.
  const card = () =>
    sandbox
      .messages(LEADS_CHAT)
      .filter((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))
      .at(-1)!;
  await waitFor(() => card(), 5000, `card of #${id}`);
  return { id, card };
}

const row = async (id: number) =>
  (await sqlRow<{ status: string; name: string | null; phone: string | null; anonymised_at: number | null }>(
    server.db,
    'select status, name, phone, anonymised_at from leads where id = ?',
    id,
  ))!;
const changes = async () => (await sqlRow<{ n: number }>(server.db, 'select count(*) as n from lead_status_changes'))!.n;

beforeEach(() => {
  clock = new FakeClock();
});

describe('a press is answered "Готово" only when the card shows it', () => {
  it('the card edit fails: the answer says the card will catch up, and it does; without the fault: "Готово: …"', async () => {
    await boot();
    const { id, card } = await newLead();
    sandbox.inject(EDIT_FAILS);
    const answer = await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`);
    expect(answer).toBe('Готово: 🛠 В работе. Карточка обновится чуть позже.');
    expect(answer.length).toBeLessThanOrEqual(200);
    expect((await row(id)).status).toBe('in_progress');
    expect(card().text).toContain('Статус: 🆕 Новая');

    // The outbox keeps trying: at the next due pass the card catches up.
    clock.advance(5 * MIN);
    await server.outbox.tick();
    expect(card().text).toContain('Статус: 🛠 В работе');

    clock.advance(MIN);
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:in_progress:won`)).toBe('Готово: ✅ Заказ');
    expect(card().text).toContain('Статус: ✅ Заказ');
  });

  it('"status already changed" also says when the card has not caught up yet', async () => {
    await boot();
    const { id, card } = await newLead();
    sandbox.inject({ ...EDIT_FAILS, count: 2 });
    const answer = await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`);
    expect(answer).toBe('Готово: 🛠 В работе. Карточка обновится чуть позже.');
    // The card still offers "Спам" from "Новая": a second member presses it.
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:spam`)).toBe(
      'Статус уже изменён: 🛠 В работе (Мария Менеджер). Карточка обновится чуть позже.',
    );
    expect((await row(id)).status).toBe('in_progress');
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:spam`)).toBe('Статус уже изменён: 🛠 В работе (Мария Менеджер).');
    expect(card().text).toContain('Статус: 🛠 В работе');
  });
});

describe("a press acts only through the lead's own card", () => {
  it('after the database is replaced, an old card with the same lead number is refused and changes nothing', async () => {
    await boot();
    const before = await newLead();
    const oldCard = before.card();
    await server.close();

    await boot();
    const after = await newLead();
    expect(after.id).toBe(before.id);
    expect(after.card().message_id).not.toBe(oldCard.message_id);

    expect(await press(LEADS_CHAT, oldCard.message_id, `lead:${before.id}:new:spam`)).toBe(STALE);
    expect((await row(after.id)).status).toBe('new');
    expect(await changes()).toBe(0);
    expect(await press(LEADS_CHAT, after.card().message_id, `lead:${after.id}:new:in_progress`)).toBe('Готово: 🛠 В работе');
  });

  it("a button naming lead #1 on another message (another lead's card, a member's message) is refused", async () => {
    await boot();
    const first = await newLead();
    const second = await newLead();
    const memberMessage = sandbox.say(LEADS_CHAT, 'привет', OTHER);
    for (const messageId of [second.card().message_id, memberMessage]) {
      expect(await press(LEADS_CHAT, messageId, `lead:${first.id}:new:in_progress`)).toBe(STALE);
    }
    expect((await row(first.id)).status).toBe('new');
    expect((await row(second.id)).status).toBe('new');
    expect(await changes()).toBe(0);
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

  it('status buttons stay open to every member', async () => {
    await boot();
    const { id, card } = await newLead();
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`, OTHER)).toBe('Готово: 🛠 В работе');
  });
});

describe('/stickers_forget with LEADS_MANAGER_IDS: the list decides, as before', () => {
  it('a listed plain member may, an unlisted administrator may not, and Telegram is not asked', async () => {
    await boot({ LEADS_MANAGER_IDS: String(OTHER.id) });
    const { id } = await newLead();
    sandbox.setMember(LEADS_CHAT, THIRD, 'administrator');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, THIRD)).toBe('Обезличивать заявки могут только менеджеры.');
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, DEFAULT_USER)).toBe('Обезличивать заявки могут только менеджеры.');
    expect((await row(id)).anonymised_at).toBeNull();
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`, OTHER)).toContain('обезличена');
    expect(sandbox.callsOf('getChatMember')).toHaveLength(0);
  });
});

describe("the gateway and Telegram's length limits", () => {
  it('a message over 4096 characters is a "too_long" failure, apart from HTML that Telegram cannot parse', async () => {
    server = await start({ dbPath: join(tmp.dir, `hardening-${++n}.sqlite`), clock });
    const gateway = server.app.get(TelegramGateway);
    expect(await gateway.send({ chatId: String(LEADS_CHAT), text: '🎉'.repeat(2049), html: false })).toEqual({
      ok: false,
      kind: 'too_long',
      description: 'Bad Request: message is too long',
    });
    expect(await gateway.send({ chatId: String(LEADS_CHAT), text: '<b>x', html: true })).toMatchObject({ ok: false, kind: 'parse' });
  });

  it('an answer over 200 characters is cut with "…" (never splitting an emoji) instead of being refused', async () => {
    server = await start({ dbPath: join(tmp.dir, `hardening-${++n}.sqlite`), clock });
    const query = sandbox.press(LEADS_CHAT, sandbox.say(LEADS_CHAT, 'сообщение'), 'lead:1:new:in_progress');
    const answered = await server.app.get(TelegramGateway).answerCallback(query, '🎉'.repeat(150));
    expect(answered.ok).toBe(true);
    expect(sandbox.state.callbackAnswers).toEqual([expect.objectContaining({ callback_query_id: query, text: `${'🎉'.repeat(99)}…` })]);
  });
});
