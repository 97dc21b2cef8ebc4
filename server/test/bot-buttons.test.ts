/**
 * The real bot (nestjs-telegraf, long polling) against the sandbox: status buttons (docs/requirements.md §5), pressed
 * as updates through getUpdates. A press is answered "Готово" only when the card shows it, acts only through the
 * lead's own card, and its answer fits Telegram's limits.
 */
import { DEFAULT_USER, type Fault, type SandboxUser } from '@stickers/telegram-sandbox';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { LeadsRepository } from '../src/repositories/leads.repository';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  type BootOptions,
  callBotApi,
  lead,
  postLead,
  memberActions,
  publishLead,
  waitFor,
  type TestServer,
  sandboxSuite,
} from './harness';
import { sqlRow, sqlRows } from './support/test-database';

const MIN = 60_000;
const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_member' };
const STALE = 'Эта карточка устарела: её кнопки больше не меняют статус.';
const EDIT_FAILS: Omit<Fault, 'remaining'> = {
  method: 'editMessageText',
  kind: 'server_error',
  status: 502,
  description: 'Bad Gateway',
  chat_id: LEADS_CHAT,
};
const suite = sandboxSuite();
const { sandbox } = suite;
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, polling: true, ...options }));

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

const status = (id: number) => sqlRow<{ status: string }>(server.db, 'select status from leads where id = ?', id);
const buttons = (card: { reply_markup?: { inline_keyboard: { text: string; callback_data?: string }[][] } }) =>
  card.reply_markup!.inline_keyboard[0].map((b) => b.text);
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
    await boot({ env: { LEADS_MANAGER_IDS: `${DEFAULT_USER.id}` } });
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

describe('a press the server cannot carry out is still answered (§5.3)', () => {
  it('the status write fails (a lock held past DATABASE_BUSY_TIMEOUT_MS): "press again", nothing changed; the next press works', async () => {
    await boot();
    const { id, card } = await newLead();
    const leads = server.app.get(LeadsRepository);
    jest.spyOn(leads, 'changeStatus').mockRejectedValueOnce(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`)).toBe(
      'Не получилось: сервер заявок не смог сохранить нажатие. Нажмите ещё раз через минуту.',
    );
    expect((await row(id)).status).toBe('new');
    expect(await changes()).toBe(0);
    expect(card().text).toContain('Статус: 🆕 Новая');

    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`)).toBe('Готово: 🛠 В работе');
  });
});

describe('a press that meets an erasure', () => {
  it('erased between the checks and the compare-and-set: "the lead is anonymised", not "status already changed"', async () => {
    await boot();
    const { id, card } = await newLead();
    const leads = server.app.get(LeadsRepository);
    const before = (await leads.findLead(id))!;
    await server.app.get(AnonymisationService).forget(id);
    // The erasure's own outbox pass first: the spy below is for the press's read, not for the card's rewrite.
    await server.outbox.whenIdle();
    // The press read the lead just before the erasure committed.
    jest.spyOn(leads, 'findLead').mockResolvedValueOnce(before);
    expect(await press(LEADS_CHAT, card().message_id, `lead:${id}:new:in_progress`)).toBe('Заявка обезличена: статус больше не меняется.');
    expect(await changes()).toBe(0);
    // The erasure's rewrite of the card goes through the outbox, on its own time.
    await waitFor(() => card().text.includes('🗑 Личные данные удалены'), 10_000, 'the card rewritten as erased');
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

describe("the gateway and Telegram's length limits", () => {
  it('a message over 4096 characters is a "too_long" failure, apart from HTML that Telegram cannot parse', async () => {
    server = await boot({ polling: false });
    const gateway = server.app.get(TelegramGateway);
    expect(await gateway.send({ chatId: String(LEADS_CHAT), text: '🎉'.repeat(2049), html: false })).toEqual({
      ok: false,
      kind: 'too_long',
      description: 'Bad Request: message is too long',
    });
    expect(await gateway.send({ chatId: String(LEADS_CHAT), text: '<b>x', html: true })).toMatchObject({ ok: false, kind: 'parse' });
  });

  it('an answer over 200 characters is cut with "…" (never splitting an emoji) instead of being refused', async () => {
    server = await boot({ polling: false });
    const query = sandbox.press(LEADS_CHAT, sandbox.say(LEADS_CHAT, 'сообщение'), 'lead:1:new:in_progress');
    const answered = await server.app.get(TelegramGateway).answerCallback(query, '🎉'.repeat(150));
    expect(answered.ok).toBe(true);
    expect(sandbox.state.callbackAnswers).toEqual([expect.objectContaining({ callback_query_id: query, text: `${'🎉'.repeat(99)}…` })]);
  });
});
