/**
 * The outbox publishing real cards through telegraf to the Telegram sandbox over loopback, with a fake clock.
 * docs/requirements.md §4.1 (passes), §4.2 (retry schedule), §4.3 (flood control), §4.6 (repeats), §4.8–§4.9 (the card).
 * A card Telegram refuses as too long goes out (or is rewritten) in the minimal form with one alert. What happens when
 * the database refuses to record a send is in outbox-unrecorded-sends.test.ts.
 */
import { join } from 'node:path';
import { ru } from '../src/i18n/ru';
import { CardService } from '../src/cards/card.service';
import type { Lead } from '../src/domain/lead';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  advanceAndTick,
  type BootOptions,
  lead,
  postLead,
  submitLead,
  waitFor,
  type TestServer,
  sandboxSuite,
  watchAlerts,
} from './harness';
import { sqlRow, sqlRows, sqlRun } from './support/test-database';
import { captureConsole } from './support/console';
import { retry } from '../src/cli/ops';

const SEC = 1000;
const MIN = 60 * SEC;
const suite = sandboxSuite();
const { tmp, sandbox } = suite;
let server: TestServer;
let clock: FakeClock;
let n = 0;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, ...options }));

const submit = (overrides: Record<string, unknown> = {}) => submitLead(server, overrides);
const tickAt = (ms: number) => advanceAndTick(server, ms);

const cards = () => sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith('🆕 Заявка'));
const cardOf = (id: number) => cards().find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
/** The first row the query returns, on SQLite or PostgreSQL. */
const row = (sql: string, ...params: unknown[]) => sqlRow(server.db, sql, ...params);
const cardsOf = (id: number) => cards().filter((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const pingsOf = (id: number) => sandbox.messages(LEADS_CHAT).filter((m) => m.text === `🔁 Повторное обращение по заявке #${id}`);
/** The lead's (latest) card row in the outbox: its failures, next time and last error, named as /stickers_new names them. */
const cardRow = (id: number) =>
  row(
    "select attempts as publish_attempts, next_at as next_attempt_at, last_error from outbox where kind = 'card' and lead_id = ? order by id desc",
    id,
  );
const leadRow = async (id: number) => (await sqlRow<Lead>(server.db, 'select * from leads where id = ?', id))!;
const eventsOf = (id: number) =>
  sqlRows<{ kind: string; detail: string }>(server.db, 'select kind, detail from lead_events where lead_id = ? order by id', id);
/** The lead as the status service leaves it after a press: a new status, the card marked for rewriting. */
const setStatus = (id: number, status: string, dirtyAt = clock.now()) =>
  sqlRun(server.db, 'update leads set status = ?, card_dirty_at = ? where id = ?', status, dirtyAt, id);
/** Telegram answers the next call of `method` to the leads chat with a 400. */
const refuse = (method: string, description: string) => sandbox.inject({ method, kind: 'bad_request', description, chat_id: LEADS_CHAT });

beforeEach(() => {
  clock = new FakeClock();
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe('publishing a card', () => {
  it('publishes at once after the 201 and stores published_at, chat_id, message_id', async () => {
    await boot();
    const id = await submit({
      name: 'Анна Ким',
      telegram: '@anna_kim',
      phone: '+79991234567',
      date: '14 февраля',
      guests: '30',
      comment: 'Свадьба',
    });
    const card = cardOf(id)!;
    expect(card.text).toContain('Имя: Анна Ким');
    expect(card.text).toContain('Telegram: @anna_kim');
    expect(card.text).toContain('Телефон: +7 999 123 45 67');
    expect(card.text).toContain('Статус: 🆕 Новая');
    expect(card.reply_markup!.inline_keyboard[0]).toEqual([
      { text: 'В работу', callback_data: `lead:${id}:new:in_progress` },
      { text: 'Спам', callback_data: `lead:${id}:new:spam` },
    ]);
    expect(card.reply_markup!.inline_keyboard[1]).toEqual([{ text: '✈️ Написать @anna_kim', url: 'https://t.me/anna_kim' }]);
    expect(await row('select published_at, chat_id, message_id, card_format from leads where id = ?', id)).toEqual({
      published_at: clock.now(),
      chat_id: String(LEADS_CHAT),
      message_id: card.message_id,
      card_format: 'html',
    });
  });

  it('escapes everything the visitor typed: <b>Tom & "Jerry"</b> arrives as text, not markup', async () => {
    await boot();
    const id = await submit({ name: '<b>Tom & "Jerry"</b>', comment: '<a href="x">click</a> & <script>' });
    const card = cardOf(id)!;
    expect(card.text).toContain('Имя: <b>Tom & "Jerry"</b>');
    expect(card.text).toContain('<a href="x">click</a> & <script>');
    // The only markup is ours: bold labels and header, never inside the visitor's values.
    const nameOffset = card.text.indexOf('<b>Tom');
    expect(card.entities.every((e) => e.type === 'bold' && (e.offset + e.length <= nameOffset || e.offset > nameOffset + 20))).toBe(true);
    const sent = sandbox.callsOf('sendMessage').find((c) => String(c.params.text).includes('Tom'))!;
    expect(sent.params.text).toContain('&lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;/b&gt;');
  });

  it('LEADS_CARD_PII=0 hides every personal field: name, username, phone, date, guests, comment (and the link button)', async () => {
    await boot({ env: { LEADS_CARD_PII: '0' } });
    const id = await submit({
      name: 'Секретное Имя',
      telegram: '@secret_user',
      phone: '+79995550000',
      date: '1 мая',
      guests: '12',
      comment: 'секрет',
    });
    const card = cardOf(id)!;
    for (const hidden of ['Секретное Имя', 'secret_user', '+79995550000', 'секрет', '1 мая', 'Гостей'])
      expect(card.text).not.toContain(hidden);
    expect(card.text).toContain('🔒 Личные данные скрыты (LEADS_CARD_PII=0)');
    expect(card.reply_markup!.inline_keyboard).toHaveLength(1);
  });

  it('a card Telegram refuses as HTML goes out as plain text, with an admin alert', async () => {
    await boot();
    sandbox.inject({
      method: 'sendMessage',
      kind: 'bad_request',
      description: "Bad Request: can't parse entities: Unsupported start tag",
      chat_id: LEADS_CHAT,
    });
    const id = await submit();
    const card = cardOf(id)!;
    expect(card.entities).toEqual([]);
    expect(await row('select card_format from leads where id = ?', id)).toEqual({ card_format: 'plain' });
    await waitFor(
      () => sandbox.messages(ADMIN_CHAT).some((m) => m.text.includes(`#${id}`) && m.text.includes('простым текстом')),
      3000,
      'the plain-text alert',
    );
  });

  it('without TELEGRAM_BOT_TOKEN leads are stored and publishing waits, logged once', async () => {
    await boot({ sandbox: undefined });
    await submit();
    await submit();
    expect(sandbox.callsOf('sendMessage')).toHaveLength(0);
    expect(server.logger.lines.filter((l) => l.includes('publishing paused'))).toHaveLength(1);
    expect(await row('select count(*) as n from leads where published_at is null')).toEqual({ n: 2 });
  });
});

describe('a card Telegram refuses as too long', () => {
  const minimalText = (id: number, status: string) => `🆕 Заявка #${id}\nСтатус: ${status}\n⚠️ ${ru.card.minimalNote}`;

  it('goes out in the minimal form (number, status, buttons, the note) with one alert', async () => {
    await boot();
    const alerts = watchAlerts(server);
    refuse('sendMessage', 'Bad Request: message is too long');
    const id = await submit({ name: 'Очень Длинное Имя' });
    const [card] = cardsOf(id);
    expect(card.text).toBe(minimalText(id, '🆕 Новая'));
    expect(card.text).not.toContain('Очень Длинное Имя');
    expect(card.reply_markup!.inline_keyboard).toEqual([
      [
        { text: 'В работу', callback_data: `lead:${id}:new:in_progress` },
        { text: 'Спам', callback_data: `lead:${id}:new:spam` },
      ],
    ]);
    expect(await leadRow(id)).toMatchObject({ message_id: card.message_id, card_format: 'html' });
    expect((await leadRow(id)).published_at).not.toBeNull();
    expect(await eventsOf(id)).toEqual([{ kind: 'published_minimal', detail: expect.stringContaining('message is too long') }]);
    expect(await alerts()).toEqual([{ key: `card_minimal:${id}`, result: 'sent' }]);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.text.includes(`#${id}`))).toHaveLength(1);
  });

  it('HTML refused, then the plain text refused as too long: the minimal card, and only its alert', async () => {
    await boot();
    const alerts = watchAlerts(server);
    refuse('sendMessage', "Bad Request: can't parse entities: Unsupported start tag");
    refuse('sendMessage', 'Bad Request: message is too long');
    const id = await submit();
    expect(cardsOf(id).map((c) => c.text)).toEqual([minimalText(id, '🆕 Новая')]);
    expect(await alerts()).toEqual([{ key: `card_minimal:${id}`, result: 'sent' }]);
  });

  it('a rewrite refused as too long (status change) becomes the minimal card with working buttons; still one alert per lead', async () => {
    await boot();
    const alerts = watchAlerts(server);
    const id = await submit();
    const [card] = cardsOf(id);
    await setStatus(id, 'in_progress');
    refuse('editMessageText', 'Bad Request: MESSAGE_TOO_LONG');
    expect(await server.outbox.refreshCard(id)).toBe('shown');
    const edited = sandbox.state.message(LEADS_CHAT, card.message_id)!;
    expect(edited.text).toBe(minimalText(id, '🛠 В работе'));
    expect(edited.reply_markup).toEqual(server.app.get(CardService).minimalCardFor(await leadRow(id)).keyboard);
    expect(edited.reply_markup!.inline_keyboard[0].length).toBeGreaterThan(0);
    expect((await leadRow(id)).card_dirty_at).toBeNull();
    expect((await eventsOf(id)).at(-1)).toEqual({ kind: 'card_rewritten', detail: expect.stringContaining('minimal card') });

    // The next change is refused as too long too: rewritten again, no second alert.
    await setStatus(id, 'won', clock.now() + 1);
    refuse('editMessageText', 'Bad Request: MESSAGE_TOO_LONG');
    await server.outbox.tick();
    expect(sandbox.state.message(LEADS_CHAT, card.message_id)!.text).toContain('Статус: ');
    expect((await leadRow(id)).card_dirty_at).toBeNull();
    expect(await alerts()).toEqual([
      { key: `card_minimal:${id}`, result: 'sent' },
      { key: `card_minimal:${id}`, result: 'throttled' },
    ]);
  });

  it('a rewrite that finds the card deleted: a new card, and the trace says why', async () => {
    await boot();
    const id = await submit();
    await setStatus(id, 'in_progress');
    refuse('editMessageText', 'Bad Request: message to edit not found');
    expect(await server.outbox.refreshCard(id)).toBe('later');
    expect(await eventsOf(id)).toContainEqual({
      kind: 'card_gone',
      detail: 'Bad Request: message to edit not found; a new card will be published',
    });
    await server.outbox.tick();
    expect(cardsOf(id)).toHaveLength(2);
    expect(cardsOf(id)[1].text).toContain('В работе');
  });

  it('a repeat whose card edit is refused as too long: the minimal card, then the ping', async () => {
    await boot();
    const id = await submit({ phone: '+79990006666' });
    clock.advance(MIN);
    refuse('editMessageText', 'Bad Request: message is too long');
    await submit({ phone: '+79990006666', guests: '88' });
    expect(cardsOf(id).map((c) => c.text)).toEqual([minimalText(id, '🆕 Новая')]);
    expect(pingsOf(id)).toHaveLength(1);
    expect(await sqlRow(server.db, 'select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'pinged' });
  });
});

describe('refreshCard tells its caller whether the card shows the lead as stored', () => {
  it("'shown' after an edit or when nothing is to rewrite; 'later' when not published, on flood control, on failure", async () => {
    await boot();

    sandbox.inject({ method: 'sendMessage', kind: 'server_error', chat_id: LEADS_CHAT });
    const unpublished = await submit();
    await setStatus(unpublished, 'in_progress');
    expect(await server.outbox.refreshCard(unpublished)).toBe('later');

    const id = await submit();
    expect(await server.outbox.refreshCard(id)).toBe('shown');

    await setStatus(id, 'in_progress');
    sandbox.inject({ method: 'editMessageText', kind: 'server_error', chat_id: LEADS_CHAT });
    expect(await server.outbox.refreshCard(id)).toBe('later');
    sandbox.inject({ method: 'editMessageText', kind: 'retry_after', retry_after: 3, chat_id: LEADS_CHAT });
    clock.advance(5 * MIN);
    expect(await server.outbox.refreshCard(id)).toBe('later');
    expect(await server.outbox.refreshCard(id)).toBe('later'); // still paused: no call at all
    clock.advance(3 * SEC);
    expect(await server.outbox.refreshCard(id)).toBe('shown');
    expect(cardsOf(id)[0].text).toContain('В работе');
  });
});

describe('retry schedule', () => {
  it('two 500s then success: attempts at 0 s, 5 s later, then 15 s later', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 2, chat_id: LEADS_CHAT });
    const id = await submit();
    expect(await cardRow(id)).toMatchObject({
      publish_attempts: 1,
      next_attempt_at: clock.now() + 5 * SEC,
      last_error: expect.stringContaining('500'),
    });
    await tickAt(5 * SEC - 1);
    expect(sandbox.callsOf('sendMessage')).toHaveLength(1);
    await tickAt(1);
    expect(sandbox.callsOf('sendMessage')).toHaveLength(2);
    expect(await cardRow(id)).toMatchObject({
      publish_attempts: 2,
      next_attempt_at: clock.now() + 15 * SEC,
    });
    await tickAt(15 * SEC - 1);
    expect(cardOf(id)).toBeUndefined();
    await tickAt(1);
    expect(cardOf(id)).toBeDefined();
    expect(await row('select last_error from leads where id = ?', id)).toEqual({ last_error: null });
  });

  it('npm run leads -- retry (its cause fixed): a card waiting for its next try goes at the next pass', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1, chat_id: LEADS_CHAT });
    const id = await submit();
    await tickAt(0);
    expect([sandbox.callsOf('sendMessage').length, cardOf(id)]).toEqual([1, undefined]);
    const location = server.config.databaseUrl ?? server.config.databasePath;
    expect(await captureConsole(() => retry(location, clock.now()))).toEqual({
      result: 0,
      log: [
        '1 waiting after a failure (cards, pings, answers, webhook deliveries): due now; the running server sends them at its next pass',
      ],
      error: [],
    });
    await tickAt(0);
    expect(cardOf(id)).toBeDefined();
  });

  it('follows 5 s, 15 s, 60 s, 5 min, then 15 min, with one admin alert per 30 min from the 5th failure', async () => {
    await boot();
    const alerts = watchAlerts(server);
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 100, chat_id: LEADS_CHAT });
    const id = await submit();
    const delays = [5 * SEC, 15 * SEC, 60 * SEC, 5 * MIN, 15 * MIN, 15 * MIN, 15 * MIN];
    for (const delay of delays) {
      const before = sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(LEADS_CHAT)).length;
      await tickAt(delay - 1);
      await tickAt(1);
      expect(sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(LEADS_CHAT))).toHaveLength(before + 1);
    }
    const attempts = (await cardRow(id)) as any;
    expect(attempts.publish_attempts).toBe(8);
    expect(attempts.next_attempt_at).toBe(clock.now() + 15 * MIN);
    // Failures 5..8 happened over 45 min: one alert at the 5th, one 30 min later (the 7th).
    expect((await alerts()).map((a) => `${a.key} ${a.result}`)).toEqual([
      'publish_failing sent',
      'publish_failing throttled',
      'publish_failing sent',
      'publish_failing throttled',
    ]);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.text.includes('Карточки не публикуются'))).toHaveLength(2);
  });

  it('a hanging Telegram times out (TELEGRAM_TIMEOUT_MS) and counts as a failure', async () => {
    await boot({ env: { TELEGRAM_TIMEOUT_MS: '300' } });
    sandbox.inject({ method: 'sendMessage', kind: 'hang', chat_id: LEADS_CHAT });
    const id = await submit();
    expect(await cardRow(id)).toMatchObject({
      publish_attempts: 1,
      last_error: expect.stringMatching(/timeout/i),
    });
    await tickAt(5 * SEC);
    expect(cardOf(id)).toBeDefined();
  });

  it('the publish alert throttle survives a restart', async () => {
    const dbPath = join(tmp.dir, `outbox-${++n}.sqlite`);
    await boot({ dbPath });
    let alerts = watchAlerts(server);
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 100, chat_id: LEADS_CHAT });
    await submit();
    for (const d of [5 * SEC, 15 * SEC, 60 * SEC, 5 * MIN]) await tickAt(d);
    expect(await alerts()).toEqual([{ key: 'publish_failing', result: 'sent' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    await server.close();
    await boot({ dbPath });
    alerts = watchAlerts(server);
    await tickAt(15 * MIN);
    // Waits for the decision instead of sleeping: a throttle lost in the restart would come to 'sent', a second alert.
    expect(await alerts()).toEqual([{ key: 'publish_failing', result: 'throttled' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    await tickAt(15 * MIN);
    expect(await alerts()).toEqual([
      { key: 'publish_failing', result: 'throttled' },
      { key: 'publish_failing', result: 'sent' },
    ]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(2);
  });
});

describe('flood control and batches', () => {
  it('429 retry_after holds the whole batch for exactly that long', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 3, chat_id: LEADS_CHAT });
    const ids = [await submit(), await submit(), await submit()];
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 7, chat_id: LEADS_CHAT });
    await tickAt(5 * SEC);
    expect(sandbox.callsOf('sendMessage')).toHaveLength(4); // 3 failures + the one that got 429; the others waited
    await tickAt(7 * SEC - 1);
    expect(sandbox.callsOf('sendMessage')).toHaveLength(4);
    expect(cards()).toHaveLength(0);
    await tickAt(1);
    expect(cards().map((c) => c.text.split('\n')[0])).toEqual(ids.map((id) => `🆕 Заявка #${id}`));
    expect(await row("select max(attempts) as n from outbox where kind = 'card'")).toEqual({ n: 1 }); // 429 is not a failure
  });

  it('12 due leads go out in batches of at most 10 per pass', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 12, chat_id: LEADS_CHAT });
    for (let i = 0; i < 12; i += 1) await submit();
    expect(cards()).toHaveLength(0);
    await tickAt(5 * SEC);
    expect(cards()).toHaveLength(10);
    await server.outbox.tick();
    expect(cards()).toHaveLength(12);
  });

  it('no duplicate card over many ticks', async () => {
    await boot();
    const ids: number[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await submit());
    for (let i = 0; i < 30; i += 1) await tickAt(2 * SEC);
    expect(cards()).toHaveLength(5);
    expect(sandbox.callsOf('sendMessage')).toHaveLength(5);
  });

  it('a tick that takes longer than the interval is not re-entered', async () => {
    await boot({ env: { TELEGRAM_TIMEOUT_MS: '5000' } });
    sandbox.inject({ method: 'sendMessage', kind: 'hang', chat_id: LEADS_CHAT });
    const id = (await postLead(server, lead())).body.lead_number as number;
    // The pass started by the commit is inside Telegram: its sendMessage hangs.
    await waitFor(() => sandbox.callsOf('sendMessage').length === 1, 5000, 'the hanging sendMessage');
    const first = server.outbox.tick();
    const second = server.outbox.tick();
    expect(second).toBe(first);
    // The hang ends in a 502; once the pass is over, a second pass run meanwhile would have sent the still-due lead again.
    sandbox.releaseHanging();
    await first;
    await server.outbox.whenIdle();
    expect(sandbox.callsOf('sendMessage')).toHaveLength(1);
    expect(await cardRow(id)).toMatchObject({
      publish_attempts: 1,
      last_error: expect.stringContaining('502'),
    });
  });

  it('with the interval running, a lead stored while publishing was off is published by the interval', async () => {
    await boot({ env: { PUBLISH_INTERVAL_SEC: '1' } });
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1, chat_id: LEADS_CHAT });
    const id = await submit();
    await server.close();
    clock.advance(5 * SEC);
    await boot({ dbPath: server.config.databasePath, scheduled: true, env: { PUBLISH_INTERVAL_SEC: '1' } });
    await waitFor(() => cardOf(id), 5000, 'the card from the interval');
  });
});

describe('group migration', () => {
  it('a 400 with migrate_to_chat_id moves publishing to the new chat, persisted, with an alert', async () => {
    const dbPath = join(tmp.dir, `outbox-${++n}.sqlite`);
    await boot({ dbPath });
    const newChat = -1009999999999;
    sandbox.migrateChat(LEADS_CHAT, newChat);
    const id = await submit();
    expect(sandbox.messages(newChat).some((m) => m.text.startsWith(`🆕 Заявка #${id}`))).toBe(true);
    expect(await row('select chat_id from leads where id = ?', id)).toEqual({ chat_id: String(newChat) });
    await waitFor(() => sandbox.messages(ADMIN_CHAT).some((m) => m.text.includes(String(newChat))), 3000, 'the migration alert');
    await server.close();
    await boot({ dbPath });
    const next = await submit();
    expect(sandbox.messages(newChat).some((m) => m.text.startsWith(`🆕 Заявка #${next}`))).toBe(true);
    // LEADS_CHAT_ID pointed at another group later: that group, not the one the old setting migrated to.
    await server.close();
    const another = -1008888888888;
    sandbox.state.addChat({ id: another, type: 'supergroup', title: 'Другая группа' });
    await boot({ dbPath, env: { LEADS_CHAT_ID: String(another) } });
    const third = await submit();
    expect(sandbox.messages(another).some((m) => m.text.startsWith(`🆕 Заявка #${third}`))).toBe(true);
  });

  it('a migration an earlier version kept unkeyed is taken as LEADS_CHAT_ID’s as configured, and only for it', async () => {
    const dbPath = join(tmp.dir, `outbox-${++n}.sqlite`);
    const newChat = -1009999999998;
    sandbox.state.addChat({ id: newChat, type: 'supergroup', title: 'Новая группа' });
    await boot({ dbPath });
    await sqlRun(server.db, "insert into settings (key, value, updated_at) values ('leads_chat_id', ?, 0)", String(newChat));
    await server.close();
    await boot({ dbPath });
    const first = await submit();
    expect(sandbox.messages(newChat).some((m) => m.text.startsWith(`🆕 Заявка #${first}`))).toBe(true);
    expect(await row("select key, value from settings where key like 'leads_chat_id%'")).toEqual({
      key: `leads_chat_id:${LEADS_CHAT}`,
      value: String(newChat),
    });
  });
});

describe('repeats', () => {
  it('after publication: the card gains a repeat block and a reply ping without personal data', async () => {
    await boot();
    const first = lead({ telegram: '@rep_after', phone: '+79990001111', guests: '10' });
    const id = (await postLead(server, first)).body.lead_number;
    await server.outbox.whenIdle();
    clock.advance(MIN);
    await postLead(server, lead({ telegram: '@REP_AFTER', phone: '+79990002222', guests: '25', name: 'Аня' }));
    await server.outbox.whenIdle();
    const card = cardOf(id)!;
    expect(card.history).toHaveLength(1);
    expect(card.text).toMatch(/🔁 Повторное обращение: \d\d\.\d\d\.\d{4} \d\d:\d\d\nИмя: Аня\nТелефон: \+7 999 000 22 22\nГостей: 25/);
    const ping = sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === card.message_id)!;
    expect(ping.text).toBe(`🔁 Повторное обращение по заявке #${id}`);
    expect(await row('select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'pinged' });
  });

  it('before publication: the repeat is in the first card and causes no ping', async () => {
    await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1, chat_id: LEADS_CHAT });
    const first = lead({ phone: '+79990003333' });
    const id = (await postLead(server, first)).body.lead_number;
    await server.outbox.whenIdle();
    await postLead(server, lead({ phone: '+79990003333', guests: '99' }));
    await server.outbox.whenIdle();
    await tickAt(5 * SEC);
    const card = cardOf(id)!;
    expect(card.text).toContain('Гостей: 99');
    expect(card.history).toHaveLength(0);
    expect(sandbox.messages(LEADS_CHAT)).toHaveLength(1);
    expect(await row('select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'in_card' });
  });

  it('the card shows up to 3 repeats, newest first', async () => {
    await boot();
    const first = lead({ phone: '+79990004444' });
    const id = (await postLead(server, first)).body.lead_number;
    for (let i = 1; i <= 4; i += 1) {
      clock.advance(MIN);
      await postLead(server, lead({ phone: '+79990004444', guests: `гостей ${i}` }));
      await server.outbox.whenIdle();
    }
    await server.outbox.tick();
    const text = cardOf(id)!.text;
    expect(text.match(/🔁 Повторное обращение:/g)).toHaveLength(3);
    expect(text.indexOf('гостей 4')).toBeLessThan(text.indexOf('гостей 3'));
    expect(text).not.toContain('гостей 1');
    expect(text).toContain('…и ещё повторных: 1');
  });

  it('a repeat of a lead that became spam is only marked handled', async () => {
    await boot();
    sandbox.inject({ method: 'editMessageText', kind: 'server_error', count: 1, chat_id: LEADS_CHAT });
    const first = lead({ phone: '+79990005555' });
    const id = (await postLead(server, first)).body.lead_number;
    await server.outbox.whenIdle();
    await postLead(server, lead({ phone: '+79990005555' }));
    await server.outbox.whenIdle();
    await sqlRun(server.db, "update leads set status = 'spam' where id = ?", id);
    await tickAt(5 * SEC);
    expect(await row('select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'skipped' });
    expect(sandbox.messages(LEADS_CHAT)).toHaveLength(1);
  });

  it('"message is not modified" counts as success; 5 failures give up', async () => {
    await boot();
    const a = lead({ phone: '+79990006666' });
    const id = (await postLead(server, a)).body.lead_number;
    await server.outbox.whenIdle();
    sandbox.inject({
      method: 'editMessageText',
      kind: 'bad_request',
      description: 'Bad Request: message is not modified: specified new message content',
      chat_id: LEADS_CHAT,
    });
    await postLead(server, lead({ phone: '+79990006666' }));
    await server.outbox.whenIdle();
    expect(await row('select notify_outcome from lead_repeats order by id desc')).toEqual({ notify_outcome: 'pinged' });

    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 10, chat_id: LEADS_CHAT });
    clock.advance(MIN);
    await postLead(server, lead({ phone: '+79990006666' }));
    await server.outbox.whenIdle();
    for (const d of [5 * SEC, 15 * SEC, 60 * SEC, 5 * MIN]) await tickAt(d);
    expect(
      await row(
        "select r.notify_outcome, o.attempts as notify_attempts, r.last_error from lead_repeats r join outbox o on o.repeat_id = r.id and o.kind = 'repeat_ping' order by r.id desc",
      ),
    ).toEqual({
      notify_outcome: 'gave_up',
      notify_attempts: 5,
      last_error: expect.stringContaining('500'),
    });
    await tickAt(15 * MIN);
    expect(cardOf(id)).toBeDefined();
  });
});

describe('unpublished leads report', () => {
  it('lists every lead without a card with its last error and next attempt, oldest first', async () => {
    await boot();
    const published = await submit();
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 2, chat_id: LEADS_CHAT, description: 'Bad Gateway', status: 502 });
    const a = await submit();
    clock.advance(SEC);
    const b = await submit();
    const { LeadsRepository: OutboxRepository } = await import('../src/repositories/leads.repository');
    const list = await server.app.get(OutboxRepository).listUnpublished(50);
    expect(list.map((l) => l.id)).toEqual([a, b]);
    expect(list.map((l) => l.id)).not.toContain(published);
    expect(list[0]).toMatchObject({ publish_attempts: 1, last_error: '502: Bad Gateway', next_attempt_at: clock.now() - SEC + 5 * SEC });
  });
});
