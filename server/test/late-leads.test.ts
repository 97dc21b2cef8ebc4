/**
 * The server's part: a request the landing kept in its spool while the server could not take it, replayed
 * later with `late` (the visitor's time, the landing's route, its fallback message). The real app, the Telegram
 * sandbox over loopback (the landing's fallback message is sent the way the landing sends it: the Bot API with the
 * same token), a fake clock.
 */
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { fallbackSignature } from '../src/access/fallback-verifier';
import { formatTrace } from '../src/trace/trace-format';
import { TraceService, type LeadTrace } from '../src/trace/trace.service';
import {
  ADMIN_CHAT,
  callBotApi,
  FakeClock,
  LEADS_CHAT,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  type BootOptions,
  type TestServer,
  TELEGRAM_LINK,
} from './harness';
import { sqlRow, sqlRows, sqlRun } from './support/test-database';

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const OTHER_BOT: SandboxUser = { id: 7000000099, is_bot: true, first_name: 'Старый бот лендинга', username: 'old_landing_bot' };
const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;
/** The app on a fresh database file with this test's clock, no rate limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, ...options }));

const iso = (ms: number) => new Date(ms).toISOString();

/** The landing's fallback message, sent as the landing sends it: the Bot API, the same token, plain text. */
async function fallbackMessage(requestId: string, chatId: number = LEADS_CHAT): Promise<number> {
  const sent = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
    chat_id: chatId,
    text: `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${requestId})\n\nЗаявка с сайта\nИмя: Анна Ким`,
    link_preview_options: { is_disabled: true },
  });
  return sent.message_id;
}

interface LateOptions {
  submittedAt: number;
  route?: string;
  reason?: string;
  /** `sig`: the claim's signature; by default the landing's (the bot token, this request, chat and message). */
  fallback?: { chatId: number | string; messageId: number; sentAt?: number; sig?: string | null };
}

/** A body as the landing's replay sends it: the normal body plus `late`, its fallback claim signed as the landing signs it. */
function late(body: Record<string, unknown>, o: LateOptions): Record<string, unknown> {
  return {
    ...body,
    late: {
      submitted_at: iso(o.submittedAt),
      route: o.route ?? (o.fallback ? 'fallback' : 'lost'),
      reason: o.reason ?? '503',
      ...(o.fallback
        ? {
            fallback: {
              chat_id: String(o.fallback.chatId),
              message_id: o.fallback.messageId,
              sent_at: iso(o.fallback.sentAt ?? o.submittedAt + 800),
              ...signed(String(body.request_id), String(o.fallback.chatId), o.fallback.messageId, o.fallback.sig),
            },
          }
        : {}),
    },
  };
}

/** The claim's `sig`: the landing's signature unless the test gives one (null: none at all). */
function signed(requestId: string, chatId: string, messageId: number, sig?: string | null): { sig?: string } {
  if (sig === null) return {};
  return { sig: sig ?? fallbackSignature(sandbox.token, requestId, chatId, messageId) };
}

/** Lets the publish that a 201 triggers finish, then runs one more pass (the replies follow the cards). */
async function pass(): Promise<void> {
  await server.outbox.whenIdle();
  await server.outbox.tick();
}

/**
 * The lead's row, with its outbox rows' failures and next times under the names /stickers_new and the trace give
 * them: the card's (`publish_attempts`, `next_attempt_at`) and its fallback reply's (`fallback_attempts`, `fallback_next_at`).
 */
const row = async (id: number) => {
  const lead = (await sqlRow<Record<string, any>>(server.db, 'select * from leads where id = ?', id))!;
  const latest = (kind: string) =>
    sqlRow<{ attempts: number; next_at: number }>(
      server.db,
      'select attempts, next_at from outbox where lead_id = ? and kind = ? and repeat_id is null order by id desc',
      id,
      kind,
    );
  const card = await latest('card');
  const reply = await latest('fallback_reply');
  return {
    ...lead,
    publish_attempts: card?.attempts ?? 0,
    next_attempt_at: card?.next_at ?? null,
    fallback_attempts: reply?.attempts ?? 0,
    fallback_next_at: reply?.next_at ?? null,
  };
};
const messages = () => sandbox.messages(LEADS_CHAT);
const message = (id: number, chat: number = LEADS_CHAT) => sandbox.messages(chat).find((m) => m.message_id === id)!;
const repliesTo = (id: number, chat: number = LEADS_CHAT) => sandbox.messages(chat).filter((m) => m.reply_to_message_id === id);
const leadCount = async () => (await sqlRow<{ n: number }>(server.db, 'select count(*) as n from leads'))!.n;
const trace = async (key: string) => (await server.app.get(TraceService).read(key)) as LeadTrace;
const kinds = (t: LeadTrace) => t.events.map((e) => (e.repeat_request_id ? `${e.kind} [repeat]` : e.kind));

const press = (messageId: number, data: string) => memberActions(sandbox).press(LEADS_CHAT, messageId, data);

beforeEach(() => {
  clock = new FakeClock();
});

describe('a late lead with its fallback message in the leads group', () => {
  it('keeps the visitor time, passes the visitors’ full limits (replays are counted apart, at arrival), and its fallback message becomes the card with working buttons', async () => {
    await boot({ limits: { LEADS_IP_LIMIT: '1', LEADS_HOURLY_LIMIT: '1' }, polling: true });
    const visitor = '203.0.113.7';
    // The limits are full: the visitor's one and the hourly one.
    expect((await postLead(server, lead({ client_ip: visitor }))).status).toBe(201);
    expect((await postLead(server, lead({ client_ip: visitor }))).body).toMatchObject({ error: 'rate_limited', why: 'visitor' });
    expect((await postLead(server, lead())).body).toMatchObject({ error: 'rate_limited', why: 'hourly' });
    await server.outbox.whenIdle();
    const before = messages().length;

    const body = lead({ client_ip: visitor, name: 'Вера Поздняя' });
    const submittedAt = clock.now() - 2 * MIN;
    const fallbackId = await fallbackMessage(body.request_id as string);
    clock.advance(30 * SEC);
    const res = await postLead(server, late(body, { submittedAt, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }));
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    expect(await row(id)).toMatchObject({
      created_at: submittedAt,
      received_at: clock.now(),
      late_route: 'fallback',
      late_reason: '503',
      fallback_chat_id: String(LEADS_CHAT),
      fallback_message_id: fallbackId,
      fallback_sent_at: submittedAt + 800,
    });
    // Counted at its arrival, among the replays: the visitors' own count holds only the first lead.
    const accepted = await sqlRows(server.db, "select at from rate_events where kind = 'accepted' order by id");
    expect(accepted).toEqual([{ at: clock.now() - 30 * SEC }]);
    expect(await sqlRows(server.db, "select at from rate_events where kind = 'late' order by id")).toEqual([{ at: clock.now() }]);
    expect(server.logger.lines.filter((l) => l.includes('lead created') && l.includes('"late":true'))).toHaveLength(1);
    // Still full for the next visitor request that comes in time.
    expect((await postLead(server, lead({ client_ip: visitor }))).body).toMatchObject({ why: 'visitor' });

    await pass();
    const card = message(fallbackId);
    expect(card.text.split('\n').slice(0, 3)).toEqual([
      `🆕 Заявка #${id}`,
      '🕒 29.11.2026 11:58',
      '📨 Пришла через резервный канал в 11:58',
    ]);
    expect(card.text).toContain('Имя: Вера Поздняя');
    expect(card.text).toContain('Статус: 🆕 Новая');
    expect(card.entities.some((e) => e.type === 'bold')).toBe(true);
    expect(card.reply_markup!.inline_keyboard[0]).toEqual([
      { text: 'В работу', callback_data: `lead:${id}:new:in_progress` },
      { text: 'Спам', callback_data: `lead:${id}:new:spam` },
    ]);
    // One message for it in the group: the fallback message itself, edited; nothing was sent.
    expect(messages()).toHaveLength(before + 1);
    expect(messages().filter((m) => m.text.includes('Вера Поздняя'))).toEqual([card]);
    expect(await row(id)).toMatchObject({
      published_at: clock.now(),
      chat_id: String(LEADS_CHAT),
      message_id: fallbackId,
      fallback_state: 'adopted',
    });

    expect(await press(fallbackId, `lead:${id}:new:in_progress`)).toBe('Готово: 🛠 В работе');
    expect(message(fallbackId).text).toMatch(/Статус: 🛠 В работе — Мария Менеджер/);
    expect(message(fallbackId).text).toContain('📨 Пришла через резервный канал в 11:58');

    const story = await trace(body.request_id as string);
    expect(kinds(story)).toEqual(['received_late', 'fallback_adopted', 'card_rewritten']);
    expect(story.events[0].detail).toContain(`submitted on the landing ${iso(submittedAt)}, route fallback (503)`);
    expect(story.events[0].detail).toContain(`fallback message: chat ${LEADS_CHAT}, message ${fallbackId}`);
    expect(story.lead.late).toEqual({ route: 'fallback', reason: '503', submitted_at: submittedAt, received_at: clock.now() });
    expect(story.lead.fallback).toMatchObject({ chat_id: String(LEADS_CHAT), message_id: fallbackId, state: 'adopted' });
    const text = formatTrace(story);
    expect(text).toContain(`late          submitted on the landing ${iso(submittedAt)}, route fallback (503)`);
    expect(text).toContain(`fallback msg  chat ${LEADS_CHAT}, message ${fallbackId}`);
    expect(text).toContain('edited into the card (one message in the group)');
    expect(text).toContain('fallback_adopted: the fallback message is the card now');
    expect(JSON.stringify(story)).not.toContain('Вера');
  });

  it('an edit that fails (502) is retried on the card schedule, then adopts; flood control pauses it', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string);
    sandbox.inject({ method: 'editMessageText', kind: 'server_error', status: 502, description: 'Bad Gateway', chat_id: LEADS_CHAT });
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await server.outbox.whenIdle();
    expect(await row(id)).toMatchObject({
      published_at: null,
      publish_attempts: 1,
      next_attempt_at: clock.now() + 5 * SEC,
      fallback_state: 'pending',
    });
    expect(messages()).toHaveLength(1);

    sandbox.inject({ method: 'editMessageText', kind: 'retry_after', retry_after: 7, chat_id: LEADS_CHAT });
    clock.advance(5 * SEC);
    await server.outbox.tick();
    expect(await row(id)).toMatchObject({ published_at: null, publish_attempts: 1, next_attempt_at: clock.now() + 7 * SEC });
    clock.advance(7 * SEC);
    await server.outbox.tick();
    expect(await row(id)).toMatchObject({ message_id: fallbackId, fallback_state: 'adopted' });
    expect(messages()).toHaveLength(1);
    expect(message(fallbackId).text).toMatch(new RegExp(`^🆕 Заявка #${id}\\n`));
    expect(kinds(await trace(String(id)))).toEqual(['received_late', 'publish_failed', 'publish_deferred', 'fallback_adopted']);
  });

  it('a crash after the edit: the next pass finds the message showing the card ("not modified") and records it, nothing sent', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string);
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await server.outbox.whenIdle();
    // As if the process had died between Telegram's answer and the write: the record is not there.
    await sqlRun(
      server.db,
      "update leads set published_at = null, chat_id = null, message_id = null, fallback_state = 'pending' where id = ?",
      id,
    );
    const edits = sandbox.callsOf('editMessageText').length;
    await server.outbox.tick();
    expect(
      sandbox
        .callsOf('editMessageText')
        .slice(edits)
        .map((c) => c.description),
    ).toEqual([expect.stringMatching(/message is not modified/)]);
    expect(await row(id)).toMatchObject({ message_id: fallbackId, fallback_state: 'adopted' });
    expect(sandbox.callsOf('sendMessage').filter((c) => c.params.chat_id === LEADS_CHAT)).toHaveLength(1);
    expect(messages()).toHaveLength(1);
  });
});

describe('a fallback message that cannot become the card', () => {
  it("another bot's message (Telegram: message can't be edited): a new card, and a reply on the fallback message", async () => {
    await boot();
    const body = lead({ name: 'Олег Другойбот' });
    // The landing ran with another bot: its message is not this bot's to edit.
    const fallbackId = sandbox.say(LEADS_CHAT, `⚠️ Запасной канал: … (request_id ${String(body.request_id)})`, OTHER_BOT);
    const fallbackText = message(fallbackId).text;
    const res = await postLead(
      server,
      late(body, { submittedAt: clock.now() - 5 * MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }),
    );
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    await pass();
    expect(message(fallbackId).text).toBe(fallbackText);
    const card = messages().find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
    expect(card.from.is_bot && card.message_id).not.toBe(fallbackId);
    expect(card.text).toContain('📨 Пришла через резервный канал в 11:55');
    expect(card.reply_markup!.inline_keyboard[0][0]).toEqual({ text: 'В работу', callback_data: `lead:${id}:new:in_progress` });
    expect(repliesTo(fallbackId).map((m) => m.text)).toEqual([`✅ Заявка в базе: #${id}`]);
    expect(await row(id)).toMatchObject({ message_id: card.message_id, fallback_state: 'answered' });
    const story = await trace(body.request_id as string);
    expect(kinds(story)).toEqual(['received_late', 'fallback_not_adopted', 'published', 'fallback_answered']);
    expect(story.events[1].detail).toContain("message can't be edited");
    expect(formatTrace(story)).toContain('answered with a reply that the lead is stored (✅ and its number)');
  });

  it('a deleted fallback message: a new card; nothing to reply to, so no reply (and no stray message)', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string);
    expect(await callBotApi(sandbox, 'deleteMessage', { chat_id: LEADS_CHAT, message_id: fallbackId })).toBe(true);
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await pass();
    expect(messages().map((m) => m.text.split('\n')[0])).toEqual([`🆕 Заявка #${id}`]);
    expect(await row(id)).toMatchObject({ fallback_state: 'gone', published_at: clock.now() });
    const story = await trace(String(id));
    expect(kinds(story)).toEqual(['received_late', 'fallback_not_adopted', 'published', 'fallback_left']);
    expect(story.events[1].detail).toContain('message to edit not found');
    expect(story.events[3].detail).toContain('the fallback message is deleted: nothing to answer');
  });

  it('a fallback message in another chat than the cards (LEADS_CHAT_ID changed): a new card, the reply goes there', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string, ADMIN_CHAT);
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: ADMIN_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await pass();
    expect(message(fallbackId, ADMIN_CHAT).text).toMatch(/^⚠️ Запасной канал/);
    expect(messages().map((m) => m.text.split('\n')[0])).toEqual([`🆕 Заявка #${id}`]);
    expect(repliesTo(fallbackId, ADMIN_CHAT).map((m) => m.text)).toEqual([`✅ Заявка в базе: #${id}`]);
    expect(kinds(await trace(String(id)))).toEqual(['received_late', 'fallback_not_adopted', 'published', 'fallback_answered']);
  });

  it('a chat the bot cannot write to: the message is left alone, once', async () => {
    await boot();
    const body = lead();
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: '-1009999999999', messageId: 5 } }))
    ).body.lead_number as number;
    await pass();
    await server.outbox.tick();
    expect(await row(id)).toMatchObject({ fallback_state: 'refused', published_at: clock.now() });
    expect(sandbox.callsOf('sendMessage').filter((c) => c.params.chat_id === '-1009999999999')).toHaveLength(1);
    const story = await trace(String(id));
    expect(kinds(story)).toEqual(['received_late', 'fallback_not_adopted', 'published', 'fallback_left']);
    expect(story.events[3].detail).toMatch(/Telegram refused the reply \(400: .*chat not found\)/);
  });

  it("a message id that is another lead's card: that card is left as it is, no reply on it, a new card", async () => {
    await boot();
    const other = (await postLead(server, lead({ name: 'Первая Карточка' }))).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = messages()[0];
    const body = lead({ name: 'Вторая Заявка' });
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: LEADS_CHAT, messageId: card.message_id } }))
    ).body.lead_number as number;
    await pass();
    expect(message(card.message_id).text).toMatch(new RegExp(`^🆕 Заявка #${other}\\n`));
    expect(message(card.message_id).text).toContain('Первая Карточка');
    expect(repliesTo(card.message_id)).toHaveLength(0);
    expect(messages().map((m) => m.text.split('\n')[0])).toEqual([`🆕 Заявка #${other}`, `🆕 Заявка #${id}`]);
    expect(await row(id)).toMatchObject({ fallback_state: 'refused' });
    expect((await trace(String(id))).events[1].detail).toContain(`is the card of lead #${other}, not a fallback message`);
  });

  it('the reply follows the schedule (a 502 waits 5 s) and flood control, then it goes', async () => {
    await boot();
    const body = lead();
    // In the other chat, so that Telegram's faults there hit the reply and not the card.
    const fallbackId = await fallbackMessage(body.request_id as string, ADMIN_CHAT);
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502, description: 'Bad Gateway', chat_id: ADMIN_CHAT });
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: ADMIN_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await server.outbox.whenIdle();
    expect(await row(id)).toMatchObject({ fallback_state: 'answer', fallback_attempts: 1, fallback_next_at: clock.now() + 5 * SEC });
    await server.outbox.tick();
    expect(repliesTo(fallbackId, ADMIN_CHAT)).toHaveLength(0);
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 3, chat_id: ADMIN_CHAT });
    clock.advance(5 * SEC);
    await server.outbox.tick();
    expect(await row(id)).toMatchObject({ fallback_state: 'answer', fallback_attempts: 1 });
    clock.advance(3 * SEC);
    await server.outbox.tick();
    expect(repliesTo(fallbackId, ADMIN_CHAT).map((m) => m.text)).toEqual([`✅ Заявка в базе: #${id}`]);
    expect(kinds(await trace(String(id)))).toEqual([
      'received_late',
      'fallback_not_adopted',
      'published',
      'fallback_answer_failed',
      'fallback_answered',
    ]);
  });

  it('the reply gives up after its 5th failure and leaves the message alone', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string, ADMIN_CHAT);
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502, description: 'Bad Gateway', chat_id: ADMIN_CHAT, count: 5 });
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: ADMIN_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await server.outbox.whenIdle();
    for (const wait of [5, 15, 60, 300]) {
      clock.advance(wait * SEC);
      await server.outbox.tick();
    }
    expect(await row(id)).toMatchObject({ fallback_state: 'gave_up', fallback_attempts: 5 });
    clock.advance(HOUR);
    await server.outbox.tick();
    expect(repliesTo(fallbackId, ADMIN_CHAT)).toHaveLength(0);
    const events = kinds(await trace(String(id)));
    expect(events.filter((k) => k === 'fallback_answer_failed')).toHaveLength(4);
    expect(events[events.length - 1]).toBe('fallback_left');
  });
});

describe('repeats, known requests and what the server refuses', () => {
  it('a late repeat: no new number; the original card shows it and is pinged; the fallback message gets the repeat reply', async () => {
    await boot();
    const first = lead({ phone: '+79990007777' });
    const original = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = messages().find((m) => m.text.startsWith(`🆕 Заявка #${original}\n`))!;
    clock.advance(HOUR);

    const again = lead({ phone: '+79990007777', guests: '45' });
    const fallbackId = await fallbackMessage(again.request_id as string);
    const fallbackText = message(fallbackId).text;
    const res = await postLead(
      server,
      late(again, { submittedAt: clock.now() - 10 * MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }),
    );
    expect(res).toMatchObject({ status: 200, body: { lead_number: original, duplicate: true, repeat: true } });
    await pass();
    expect(await leadCount()).toBe(1);
    expect(message(card.message_id).text).toContain('🔁 Повторное обращение: 29.11.2026 12:50');
    expect(message(card.message_id).text).toContain('Гостей: 45');
    expect(repliesTo(card.message_id).map((m) => m.text)).toEqual([`🔁 Повторное обращение по заявке #${original}`]);
    expect(message(fallbackId).text).toBe(fallbackText);
    expect(repliesTo(fallbackId).map((m) => m.text)).toEqual([`✅ Заявка в базе: повтор заявки #${original}`]);
    const repeat = await sqlRow(server.db, 'select * from lead_repeats where request_id = ?', again.request_id);
    expect(repeat).toMatchObject({
      created_at: clock.now() - 10 * MIN,
      received_at: clock.now(),
      late_route: 'fallback',
      fallback_state: 'answered',
    });
    const story = await trace(again.request_id as string);
    expect(story.matched).toBe('repeat');
    expect(kinds(story)).toEqual(['published', 'received_late [repeat]', 'repeat_notified [repeat]', 'fallback_answered [repeat]']);
    expect(story.repeats[0]).toMatchObject({
      late: { route: 'fallback', reason: '503' },
      fallback: { message_id: fallbackId, state: 'answered' },
    });
    expect(formatTrace(story)).toMatch(/\n {6}late {10}submitted on the landing/);
  });

  it('the 24 h repeat window counts from the visitor time, not from the arrival, on either side of it', async () => {
    await boot();
    const first = lead({ phone: '+79990008888' });
    const original = (await postLead(server, first)).body.lead_number as number;
    const t0 = clock.now();
    clock.advance(26 * HOUR);
    // Sent 23 h after the lead, arriving 26 h after it: a repeat.
    const within = await postLead(server, late(lead({ phone: '+79990008888' }), { submittedAt: t0 + 23 * HOUR }));
    expect(within.body).toEqual({ lead_number: original, duplicate: true, repeat: true, telegram_link: TELEGRAM_LINK });
    // Sent 25 h after it: a new lead, though another request of the same visitor arrived after it.
    const outside = await postLead(server, late(lead({ phone: '+79990008888' }), { submittedAt: t0 + 25 * HOUR }));
    expect(outside).toMatchObject({ status: 201, body: { repeat: false } });
    expect(outside.body.lead_number).not.toBe(original);
    // A request from 3 days before a lead of the same visitor stored since: more than 24 h apart, a lead of its own.
    clock.advance(10 * 24 * HOUR);
    const recent = (await postLead(server, lead({ phone: '+79990008899' }))).body.lead_number as number;
    const old = await postLead(server, late(lead({ phone: '+79990008899' }), { submittedAt: clock.now() - 3 * 24 * HOUR }));
    expect(old).toMatchObject({ status: 201, body: { repeat: false } });
    expect(old.body.lead_number).not.toBe(recent);
    // One from 20 h before it: a repeat of it, though it came first.
    const before = await postLead(server, late(lead({ phone: '+79990008899' }), { submittedAt: clock.now() - 20 * HOUR }));
    expect(before.body).toEqual({ lead_number: recent, duplicate: true, repeat: true, telegram_link: TELEGRAM_LINK });
  });

  it('a late lead without a fallback message (route lost) gets a card that says it came late', async () => {
    await boot();
    const body = lead();
    const submittedAt = clock.now() - 3 * HOUR;
    const id = (await postLead(server, late(body, { submittedAt, route: 'lost', reason: 'timeout' }))).body.lead_number as number;
    await pass();
    const card = messages().find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
    expect(card.text.split('\n').slice(1, 3)).toEqual([
      '🕒 29.11.2026 09:00',
      '⏳ Пришла с опозданием (сервер заявок не отвечал): в базе с 12:00',
    ]);
    expect(await row(id)).toMatchObject({
      created_at: submittedAt,
      received_at: clock.now(),
      late_route: 'lost',
      late_reason: 'timeout',
      fallback_state: null,
    });
    expect(formatTrace(await trace(String(id)))).toContain(`submitted on the landing ${iso(submittedAt)}, route lost (timeout)`);
  });

  it('a replay of a known request_id answers 200 and changes nothing', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string);
    const replay = late(body, { submittedAt: clock.now() - MIN, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } });
    const first = await postLead(server, replay);
    expect(first.status).toBe(201);
    await pass();
    const story = JSON.stringify(await trace(body.request_id as string));
    const chat = JSON.stringify(messages());
    clock.advance(MIN);
    expect(await postLead(server, replay)).toMatchObject({
      status: 200,
      body: { lead_number: first.body.lead_number, duplicate: true, repeat: false },
    });
    await pass();
    expect(JSON.stringify(await trace(body.request_id as string))).toBe(story);
    expect(JSON.stringify(messages())).toBe(chat);
    expect(await leadCount()).toBe(1);
  });

  it('the server stored it but the landing gave up waiting (a card and a fallback message): the replay gets the message answered', async () => {
    await boot();
    const body = lead();
    const id = (await postLead(server, body)).body.lead_number as number;
    await server.outbox.whenIdle();
    const fallbackId = await fallbackMessage(body.request_id as string);
    const res = await postLead(
      server,
      late(body, { submittedAt: clock.now(), reason: 'timeout', fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }),
    );
    expect(res).toMatchObject({ status: 200, body: { lead_number: id, duplicate: true, repeat: false } });
    await pass();
    expect(repliesTo(fallbackId).map((m) => m.text)).toEqual([`✅ Заявка в базе: #${id}`]);
    expect(messages().filter((m) => m.text.startsWith('🆕 Заявка'))).toHaveLength(1);
    const story = await trace(String(id));
    expect(kinds(story)).toEqual(['published', 'received_late', 'fallback_answered']);
    expect(story.events[1].detail).toContain('the fallback message is recorded');
    expect(story.lead.late).toBeNull();
  });

  it('an invalid late object is 422 late: invalid, named with the other failing fields, and nothing is stored', async () => {
    await boot();
    const body = lead();
    const bad = { ...late(body, { submittedAt: clock.now() }), late: { submitted_at: 'yesterday', route: 'fallback', reason: '503' } };
    expect(await postLead(server, bad)).toMatchObject({ status: 422, body: { error: 'invalid', errors: { late: 'invalid' } } });
    // More than a day ahead is no landing's clock (a few minutes ahead is taken as the server's time).
    const future = late(body, { submittedAt: clock.now() + 25 * 60 * MIN });
    expect((await postLead(server, future)).body).toEqual({ error: 'invalid', errors: { late: 'invalid' } });
    const both = { ...late(body, { submittedAt: clock.now(), fallback: { chatId: LEADS_CHAT, messageId: 0 } }), phone: '12' };
    expect((await postLead(server, both)).body).toEqual({ error: 'invalid', errors: { phone: 'invalid', late: 'invalid' } });
    const named = late(body, { submittedAt: clock.now() });
    const extra = { ...named, late: { ...(named.late as object), valueOf: 1 } };
    expect((await postLead(server, extra)).body).toEqual({ error: 'invalid', errors: { late: 'invalid' } });
    expect(await leadCount()).toBe(0);
  });

  it('only a caller with the secret gets as far as late', async () => {
    await boot();
    const res = await postLead(server, late(lead(), { submittedAt: clock.now() }), {
      'X-Stickers-Leads-Secret': 'wrong-secret-0123456789',
    });
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(await leadCount()).toBe(0);
  });

  it('a late card is reminded 30 min after it arrived, not at once for its old time', async () => {
    await boot();
    const body = lead();
    const fallbackId = await fallbackMessage(body.request_id as string);
    const id = (
      await postLead(server, late(body, { submittedAt: clock.now() - 2 * HOUR, fallback: { chatId: LEADS_CHAT, messageId: fallbackId } }))
    ).body.lead_number as number;
    await pass();
    const housekeeping = server.app.get(HousekeepingService);
    expect(await housekeeping.remind()).toBe(0);
    clock.advance(31 * MIN);
    expect(await housekeeping.remind()).toBe(1);
    expect(repliesTo(fallbackId).map((m) => m.text)).toEqual([`⏰ Заявка #${id} ждёт ответа больше 30 мин. Возьмите её в работу.`]);
  });

  it('readiness and metrics count a late lead waiting for its card from its arrival', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502, description: 'Bad Gateway', chat_id: LEADS_CHAT });
    await postLead(server, late(lead(), { submittedAt: clock.now() - 2 * HOUR }));
    await server.outbox.whenIdle();
    clock.advance(3 * SEC);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^outbox_oldest_age_seconds 3$/m);
    const ready = (await (await fetch(`${server.url}/ready`)).json()) as { checks: { outbox: { oldest_unpublished_age_sec: number } } };
    expect(ready.checks.outbox.oldest_unpublished_age_sec).toBe(3);
  });
});

describe('a claim to a fallback message must be signed', () => {
  it('a bot message claimed without a valid signature (none, forged, another token) is neither edited nor answered; the trace says why', async () => {
    await boot();
    // Messages of the bot's that a caller with the secret might name: a reminder, another lead's fallback message.
    const reminder = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
      chat_id: LEADS_CHAT,
      text: '⏰ Заявка #1 ждёт 30 минут',
    });
    const someoneElse = await fallbackMessage(crypto.randomUUID());
    const claims = [
      { messageId: reminder.message_id, sig: null, why: 'it is not signed' },
      { messageId: someoneElse, sig: 'A'.repeat(43), why: 'its signature does not check' },
      {
        messageId: someoneElse,
        sig: fallbackSignature('123456:another-bot', 'x', String(LEADS_CHAT), someoneElse),
        why: 'its signature does not check',
      },
    ];
    const before = messages().map((m) => [m.message_id, m.text]);
    for (const claim of claims) {
      const body = lead();
      const res = await postLead(server, late(body, { submittedAt: clock.now() - 10 * MIN, fallback: { chatId: LEADS_CHAT, ...claim } }));
      expect(res.status).toBe(201);
      const id = res.body.lead_number as number;
      await pass();
      expect(await row(id)).toMatchObject({
        fallback_chat_id: null,
        fallback_message_id: null,
        fallback_state: null,
        late_route: 'fallback',
      });
      const card = messages().find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
      expect(card.message_id).not.toBe(claim.messageId);
      expect(card.text).not.toContain('📨');
      const story = await trace(body.request_id as string);
      expect(kinds(story)).toEqual(['received_late', 'published']);
      expect(story.events[0].detail).toContain(
        `the claimed fallback message (chat ${LEADS_CHAT}, message ${claim.messageId}) is ignored: ${claim.why}`,
      );
      // A replay of the stored request with the same claim records nothing either.
      expect(
        (await postLead(server, late(body, { submittedAt: clock.now() - 10 * MIN, fallback: { chatId: LEADS_CHAT, ...claim } }))).body,
      ).toMatchObject({
        lead_number: id,
        duplicate: true,
      });
      await pass();
      expect(await row(id)).toMatchObject({ fallback_message_id: null, fallback_state: null });
    }
    // The claimed messages are as they were, and nothing replied to them.
    for (const [messageId, text] of before) expect(message(messageId as number).text).toBe(text);
    expect(messages().filter((m) => m.reply_to_message_id !== undefined)).toEqual([]);
  });
});
