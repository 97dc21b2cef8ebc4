/**
 * Forum topics (docs/requirements.md §14.9): with LEADS_THREAD_ID and ADMIN_THREAD_ID the cards, their
 * repeat pings and reminders, the command answers, the alerts and the digest go into those topics of the forum
 * supergroups — against the sandbox, whose forums refuse a closed topic ("TOPIC_CLOSED") and a deleted one ("message
 * thread not found") as Telegram does. A topic that is gone never costs a card: it goes into the chat's General topic,
 * one alert tells ops, and the trace says so. Runs on both databases.
 */
import { DEFAULT_CHATS, DEFAULT_USER, type SandboxUser } from '@stickers/telegram-sandbox';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { formatTrace } from '../src/trace/trace-format';
import { TraceService, type LeadTrace } from '../src/trace/trace.service';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  submitLead,
  type BootOptions,
  type TestServer,
  waitFor,
  watchAlerts,
} from './harness';
import { sqlRow } from './support/test-database';

const MIN = 60_000;
const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна', username: 'anna_k' };
const THREAD = 12;
const ADMIN_THREAD = 7;
const TOPICS = { LEADS_THREAD_ID: String(THREAD), ADMIN_THREAD_ID: String(ADMIN_THREAD) };

// Both chats of the harness are forum supergroups here: the leads chat with its topic 12, the admin chat with 7.
const suite = sandboxSuite((s) => {
  s.state.addChat({ ...DEFAULT_CHATS[0], is_forum: true, topics: [{ id: THREAD, name: 'Заявки' }] });
  s.state.addChat({ ...DEFAULT_CHATS[1], is_forum: true, topics: [{ id: ADMIN_THREAD, name: 'Алерты' }] });
  s.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' });
});
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;

/** The app with `env` (the two topics by default) on a fresh database file. */
const boot = async ({ env = TOPICS, ...options }: BootOptions = {}) => (server = await suite.boot({ clock, env, ...options }));

const submit = (overrides: Record<string, unknown> = {}) => submitLead(server, overrides);
const inTopic = (chat: number, thread: number | null) => sandbox.topicMessages(chat, thread);
const cardOf = (id: number, chat = LEADS_CHAT) => sandbox.messages(chat).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const leadRow = (id: number) =>
  sqlRow<{ chat_id: string; card_thread_id: number | null; message_id: number }>(
    server.db,
    'select chat_id, card_thread_id, message_id from leads where id = ?',
    id,
  );
const trace = async (id: number) => (await server.app.get(TraceService).read(String(id))) as LeadTrace;
const eventDetail = async (id: number, kind: string) => (await trace(id)).events.find((e) => e.kind === kind)?.detail;
/** The last sendMessage the app made to `chat` with this text in it (HTML or not): what it asked Telegram for. */
const sendCall = (chat: number, text: string | RegExp) =>
  sandbox
    .callsOf('sendMessage')
    .filter((c) => String(c.params.chat_id) === String(chat) && String(c.params.text).search(text) >= 0)
    .at(-1);

beforeEach(() => {
  clock = new FakeClock();
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('cards in a forum topic (LEADS_THREAD_ID)', () => {
  it('the card and its repeat ping go into the topic, the ping still a reply to the card; the trace names the topic', async () => {
    await boot();
    const first = lead({ telegram: '@topic_rep', phone: '+79990007711' });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = cardOf(id)!;
    expect(card.message_thread_id).toBe(THREAD);
    expect(await leadRow(id)).toEqual({ chat_id: String(LEADS_CHAT), card_thread_id: THREAD, message_id: card.message_id });

    clock.advance(MIN);
    await postLead(server, lead({ telegram: '@TOPIC_REP', phone: '+79990007722' }));
    await server.outbox.whenIdle();
    const ping = inTopic(LEADS_CHAT, THREAD).find((m) => m.reply_to_message_id === card.message_id)!;
    expect(ping).toMatchObject({ text: `🔁 Повторное обращение по заявке #${id}`, message_thread_id: THREAD });
    // Asked for explicitly, not only inherited from the card.
    expect(sendCall(LEADS_CHAT, '🔁')!.params.message_thread_id).toBe(THREAD);
    // Nothing in the chat's General topic.
    expect(inTopic(LEADS_CHAT, null)).toEqual([]);

    const story = await trace(id);
    expect(story.lead.thread_id).toBe(THREAD);
    expect(story.events.find((e) => e.kind === 'published')?.detail).toBe(
      `chat ${LEADS_CHAT}, topic ${THREAD}, message ${card.message_id}`,
    );
    expect(formatTrace(story)).toContain(`in chat ${LEADS_CHAT}, topic ${THREAD}, message ${card.message_id}`);
  });

  it('a reminder goes into the card’s topic as a reply; the digest and the alerts into ADMIN_THREAD_ID', async () => {
    // 2026-11-29 05:30 UTC = 08:30 in Moscow; the digest is due at 09:00.
    clock = new FakeClock(Date.UTC(2026, 10, 29, 5, 30));
    await boot();
    const id = await submit();
    const card = cardOf(id)!;
    const housekeeping = server.app.get(HousekeepingService);
    clock.advance(30 * MIN);
    expect(await housekeeping.remind()).toBe(1);
    const reminder = inTopic(LEADS_CHAT, THREAD).find((m) => m.text.startsWith('⏰'))!;
    expect(reminder).toMatchObject({ reply_to_message_id: card.message_id, message_thread_id: THREAD });
    expect(sendCall(LEADS_CHAT, '⏰')!.params.message_thread_id).toBe(THREAD);

    expect(await housekeeping.digest()).toBe(true);
    // The text, then the chart's photo, both in the admin topic.
    expect(inTopic(ADMIN_CHAT, ADMIN_THREAD).map((m) => m.text.split('\n')[0])).toEqual([
      expect.stringContaining('🗓 Сводка за сутки'),
      '📈 Заявки по дням за 30 дней',
    ]);
    expect(inTopic(ADMIN_CHAT, ADMIN_THREAD)[1].photo).toHaveLength(1);
    expect(inTopic(ADMIN_CHAT, null)).toEqual([]);
  });

  it('without LEADS_THREAD_ID a forum gets its cards in the General topic, and no thread id is sent', async () => {
    await boot({ env: {} });
    const id = await submit();
    expect(cardOf(id)!.message_thread_id).toBeUndefined();
    expect(sendCall(LEADS_CHAT, new RegExp(`Заявка #${id}\\D`))!.params).not.toHaveProperty('message_thread_id');
    expect(await leadRow(id)).toMatchObject({ card_thread_id: null });
  });
});

describe('a topic that is closed or deleted', () => {
  it.each([
    ['closed', 'Bad Request: TOPIC_CLOSED'],
    ['deleted', 'Bad Request: message thread not found'],
  ])(
    '%s: the cards go into the General topic at once, one alert tells ops (in the admin topic), the trace says so',
    async (how, description) => {
      await boot();
      if (how === 'closed') sandbox.closeTopic(LEADS_CHAT, THREAD);
      else sandbox.deleteTopic(LEADS_CHAT, THREAD);
      const alerts = watchAlerts(server);
      const a = await submit();
      const b = await submit();
      // Not lost, not delayed: both in the General topic, in the first pass.
      for (const id of [a, b]) {
        expect(cardOf(id)!.message_thread_id).toBeUndefined();
        expect(await leadRow(id)).toMatchObject({ chat_id: String(LEADS_CHAT), card_thread_id: null });
      }
      expect(inTopic(LEADS_CHAT, null).map((m) => m.text.split('\n')[0])).toEqual([`🆕 Заявка #${a}`, `🆕 Заявка #${b}`]);
      // One alert: the second topic refusal is throttled.
      expect(await alerts()).toEqual([
        { key: `topic_gone:${LEADS_CHAT}:${THREAD}`, result: 'sent' },
        { key: `topic_gone:${LEADS_CHAT}:${THREAD}`, result: 'throttled' },
      ]);
      const alert = inTopic(ADMIN_CHAT, ADMIN_THREAD);
      expect(alert).toHaveLength(1);
      expect(alert[0].text).toBe(
        `⚠️ Тема ${THREAD} в чате ${LEADS_CHAT} закрыта или удалена (${description}): карточка заявки #${a} — в общей теме чата (General). ` +
          'Откройте тему снова или поправьте LEADS_THREAD_ID.',
      );
      const card = cardOf(a)!;
      expect(await eventDetail(a, 'published')).toBe(
        `chat ${LEADS_CHAT}, message ${card.message_id} (topic ${THREAD} refused (${description}): the card is in the chat's General topic)`,
      );
      // Once the topic is open again, the next card goes there.
      if (how === 'closed') {
        sandbox.reopenTopic(LEADS_CHAT, THREAD);
        const c = await submit();
        expect(cardOf(c)!.message_thread_id).toBe(THREAD);
      }
    },
  );

  it('a card whose topic closes later: its repeat ping and its reminder go into the General topic on their own', async () => {
    await boot();
    const alerts = watchAlerts(server);
    const first = lead({ telegram: '@closed_later', phone: '+79990007733' });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = cardOf(id)!;
    expect(card.message_thread_id).toBe(THREAD);
    sandbox.closeTopic(LEADS_CHAT, THREAD);

    clock.advance(MIN);
    await postLead(server, lead({ telegram: '@closed_later', phone: '+79990007744' }));
    await server.outbox.whenIdle();
    // The card in the closed topic is still edited to show the repeat.
    expect(cardOf(id)!.text).toContain('🔁 Повторное обращение');
    const ping = inTopic(LEADS_CHAT, null).find((m) => m.text === `🔁 Повторное обращение по заявке #${id}`)!;
    expect(ping.reply_to_message_id).toBeUndefined();
    expect(await sqlRow(server.db, 'select notify_outcome from lead_repeats')).toEqual({ notify_outcome: 'pinged' });
    expect(await eventDetail(id, 'repeat_notified')).toBe(
      `card edited, ping message ${ping.message_id} in the chat's General topic (the card's topic refused it: Bad Request: TOPIC_CLOSED)`,
    );

    clock.advance(30 * MIN);
    expect(await server.app.get(HousekeepingService).remind()).toBe(1);
    const reminder = inTopic(LEADS_CHAT, null).find((m) => m.text.startsWith('⏰'))!;
    expect(reminder.reply_to_message_id).toBeUndefined();
    expect(await eventDetail(id, 'reminded')).toBe(
      "still new after 30 min (in the chat's General topic: the card's topic refused it, Bad Request: TOPIC_CLOSED)",
    );
    // One alert for the topic within 30 minutes, then the next one.
    expect((await alerts()).map((a) => a.result)).toEqual(['sent', 'sent']);
    expect(inTopic(ADMIN_CHAT, ADMIN_THREAD).map((m) => m.text.slice(0, 40))).toEqual([
      expect.stringContaining(`⚠️ Тема ${THREAD}`),
      expect.stringContaining(`⚠️ Тема ${THREAD}`),
    ]);
  });

  it("a card whose topic closes later: the visitor's message goes into the General topic on its own, and ops are told", async () => {
    await boot({ polling: true });
    const alerts = watchAlerts(server);
    const created = await postLead(server, lead({ telegram: '@anna_k' }));
    const id = created.body.lead_number as number;
    await server.outbox.whenIdle();
    const payload = /start=([A-Za-z0-9_-]+)$/.exec(String(created.body.telegram_link))![1];
    expect(await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR)).toContain(`#${id}`);
    sandbox.closeTopic(LEADS_CHAT, THREAD);

    sandbox.say(VISITOR.id, 'Можно на субботу?', VISITOR);
    const relayed = await waitFor(
      () => inTopic(LEADS_CHAT, null).find((m) => m.text.includes('Можно на субботу?')),
      5000,
      'the message in General',
    );
    expect(relayed.reply_to_message_id).toBeUndefined();
    expect(await alerts()).toEqual([{ key: `topic_gone:${LEADS_CHAT}:${THREAD}`, result: 'sent' }]);
    expect(inTopic(ADMIN_CHAT, ADMIN_THREAD)[0].text).toContain(`сообщение посетителя по заявке #${id} — в общей теме чата (General)`);
  });

  it('the admin topic closed too: the alert goes into the admin chat’s General topic, saying so', async () => {
    await boot();
    sandbox.closeTopic(LEADS_CHAT, THREAD);
    sandbox.closeTopic(ADMIN_CHAT, ADMIN_THREAD);
    const alerts = watchAlerts(server);
    const id = await submit();
    expect(await alerts()).toEqual([{ key: `topic_gone:${LEADS_CHAT}:${THREAD}`, result: 'sent' }]);
    const [alert] = inTopic(ADMIN_CHAT, null);
    expect(alert.text.split('\n\n')).toEqual([
      `⚠️ Тема ADMIN_THREAD_ID=${ADMIN_THREAD} закрыта или удалена (Bad Request: TOPIC_CLOSED): сообщение в общей теме чата.`,
      expect.stringContaining(`карточка заявки #${id} — в общей теме чата (General)`),
    ]);
  });
});

describe('the bot in forum topics', () => {
  it('presses work on a card in a topic; a command gets its answer in the topic it was sent in', async () => {
    await boot({ polling: true });
    const { press } = memberActions(sandbox);
    const id = await submit();
    const card = cardOf(id)!;
    expect(await press(LEADS_CHAT, card.message_id, `lead:${id}:new:in_progress`)).toBe('Готово: 🛠 В работе');
    await waitFor(() => cardOf(id)!.text.includes('В работе'), 5000, 'the card rewritten');

    const asked = sandbox.say(LEADS_CHAT, '/stickers_stats', DEFAULT_USER, THREAD);
    const reply = await waitFor(
      () => inTopic(LEADS_CHAT, THREAD).find((m) => m.reply_to_message_id === asked && m.from.is_bot),
      5000,
      'the answer in the topic',
    );
    expect(reply.text).toContain('За 7 дней: 1');
    expect(sendCall(LEADS_CHAT, reply.text.slice(0, 10))!.params.message_thread_id).toBe(THREAD);

    // /stickers_export in the admin topic: the file and the answer there.
    const exported = sandbox.say(ADMIN_CHAT, '/stickers_export 7', DEFAULT_USER, ADMIN_THREAD);
    const answer = await waitFor(
      () => inTopic(ADMIN_CHAT, ADMIN_THREAD).find((m) => m.reply_to_message_id === exported && m.from.is_bot),
      5000,
      'the export answer',
    );
    expect(answer.text).toBe('📎 Выгрузка за 7 дн.: 1 заявка (файл выше).');
    expect(inTopic(ADMIN_CHAT, ADMIN_THREAD).find((m) => m.document)?.document?.file_name).toBe('leads-7d.csv');
  });

  it('a command in a closed topic (an administrator may still write there) gets its answer in the General topic', async () => {
    await boot({ polling: true });
    await submit();
    sandbox.closeTopic(LEADS_CHAT, THREAD);
    sandbox.closeTopic(ADMIN_CHAT, ADMIN_THREAD);
    sandbox.say(LEADS_CHAT, '/stickers_stats', DEFAULT_USER, THREAD);
    const stats = await waitFor(() => inTopic(LEADS_CHAT, null).find((m) => m.from.is_bot && m.text.includes('За 7 дней')), 5000, 'stats');
    expect(stats.reply_to_message_id).toBeUndefined();

    sandbox.say(ADMIN_CHAT, '/stickers_export 7', DEFAULT_USER, ADMIN_THREAD);
    const answer = await waitFor(() => inTopic(ADMIN_CHAT, null).find((m) => m.text.startsWith('📎')), 5000, 'the export answer');
    expect(answer.text).toBe('📎 Выгрузка за 7 дн.: 1 заявка (файл выше).');
    expect(inTopic(ADMIN_CHAT, null).find((m) => m.document)?.document?.file_name).toBe('leads-7d.csv');
  });

  it('the admin chat as a topic of the leads group: /stickers_export in the leads topic is refused, in the admin topic answered', async () => {
    const env = { LEADS_THREAD_ID: String(THREAD), ADMIN_CHAT_ID: String(LEADS_CHAT), ADMIN_THREAD_ID: '13' };
    sandbox.state.addChat({
      ...DEFAULT_CHATS[0],
      is_forum: true,
      topics: [
        { id: THREAD, name: 'Заявки' },
        { id: 13, name: 'Админы' },
      ],
    });
    await boot({ polling: true, env });
    await submit();
    const asked = sandbox.say(LEADS_CHAT, '/stickers_export 7', DEFAULT_USER, THREAD);
    const reply = await waitFor(() => inTopic(LEADS_CHAT, THREAD).find((m) => m.reply_to_message_id === asked), 5000, 'the refusal');
    expect(reply.text).toBe('Выгрузка приходит только в чат админов.');
    sandbox.say(LEADS_CHAT, '/stickers_export 7', DEFAULT_USER, 13);
    await waitFor(() => inTopic(LEADS_CHAT, 13).find((m) => m.document), 5000, 'the file in the admin topic');
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.document)).toHaveLength(1);
  });
});
