/**
 * Routing by source (docs/requirements.md §14.10): LEADS_ROUTES sends the card of each source (the lead's
 * `source.landing`) to its chat and topic; other leads go to LEADS_CHAT_ID. The card's chat (and topic) is stored
 * with the lead, so repeats, reminders, rewrites and presses work per chat, and a routed group's migration is learnt
 * per chat. Against the sandbox, with the real bot polling; runs on both databases.
 */
import { join } from 'node:path';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { ConfigError, loadServerConfig } from '../src/config/config';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { ru } from '../src/i18n/ru';
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
/** The weddings' forum, cards in its topic 5. */
const WEDDING = -1001000000011;
const WEDDING_TOPIC = 5;
/** The corporate team's group, no topics. */
const CORPORATE = -1001000000012;
const ROUTES = { LEADS_ROUTES: `wedding=${WEDDING}:${WEDDING_TOPIC}, corporate=${CORPORATE}` };

const suite = sandboxSuite((s) => {
  s.state.addChat({ id: WEDDING, type: 'supergroup', title: 'Свадьбы', is_forum: true, topics: [{ id: WEDDING_TOPIC, name: 'Заявки' }] });
  s.state.addChat({ id: CORPORATE, type: 'supergroup', title: 'Корпоративы' });
});
const { tmp, sandbox } = suite;
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;
let n = 0;

/** The app with `env` (LEADS_ROUTES by default) on a fresh database file, or on `dbPath` to restart on one. */
const boot = async ({ env = ROUTES, ...options }: BootOptions = {}) => (server = await suite.boot({ clock, env, ...options }));

const from = (landing: string) => ({ source: { landing } });
const submit = (overrides: Record<string, unknown> = {}) => submitLead(server, overrides);
const cardIn = (chat: number, id: number) => sandbox.messages(chat).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const cardsIn = (chat: number) => sandbox.messages(chat).filter((m) => m.text.startsWith('🆕 Заявка'));
const stored = (id: number) =>
  sqlRow<{ chat_id: string; card_thread_id: number | null }>(server.db, 'select chat_id, card_thread_id from leads where id = ?', id);
const trace = async (id: number) => (await server.app.get(TraceService).read(String(id))) as LeadTrace;

beforeEach(() => {
  clock = new FakeClock();
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('cards by source', () => {
  it('each source to its route (chat and topic); an unmatched source and no source to LEADS_CHAT_ID', async () => {
    await boot();
    const wedding = await submit(from('wedding'));
    const corporate = await submit(from('corporate'));
    const other = await submit(from('birthday'));
    const none = await submit();
    // Names are compared without case: a landing spelled `Wedding` is the same route.
    const upper = await submit(from('Wedding'));

    expect(cardIn(WEDDING, wedding)!.message_thread_id).toBe(WEDDING_TOPIC);
    expect(cardIn(WEDDING, upper)!.message_thread_id).toBe(WEDDING_TOPIC);
    expect(cardIn(CORPORATE, corporate)!.message_thread_id).toBeUndefined();
    expect(cardsIn(LEADS_CHAT).map((m) => m.text.split('\n')[0])).toEqual([`🆕 Заявка #${other}`, `🆕 Заявка #${none}`]);
    expect(cardsIn(WEDDING)).toHaveLength(2);
    expect(cardsIn(CORPORATE)).toHaveLength(1);

    expect(await stored(wedding)).toEqual({ chat_id: String(WEDDING), card_thread_id: WEDDING_TOPIC });
    expect(await stored(corporate)).toEqual({ chat_id: String(CORPORATE), card_thread_id: null });
    expect(await stored(other)).toEqual({ chat_id: String(LEADS_CHAT), card_thread_id: null });
    const story = await trace(wedding);
    expect(story.lead).toMatchObject({ chat_id: String(WEDDING), thread_id: WEDDING_TOPIC });
    expect(story.events.find((e) => e.kind === 'published')?.detail).toBe(
      `chat ${WEDDING}, topic ${WEDDING_TOPIC}, message ${cardIn(WEDDING, wedding)!.message_id}`,
    );
  });

  it("a repeat pings the original card's chat and topic, whatever its own source; the reminder goes there too", async () => {
    await boot();
    const first = lead({ telegram: '@route_rep', phone: '+79990008811', ...from('wedding') });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = cardIn(WEDDING, id)!;

    clock.advance(MIN);
    // The visitor came back through the corporate landing: the repeat keeps its own source, the card stays.
    const again = await postLead(server, lead({ telegram: '@ROUTE_REP', phone: '+79990008822', ...from('corporate') }));
    expect(again.body).toMatchObject({ lead_number: id, repeat: true });
    await server.outbox.whenIdle();
    expect(card.history).toHaveLength(1);
    const ping = sandbox.messages(WEDDING).find((m) => m.reply_to_message_id === card.message_id)!;
    expect(ping).toMatchObject({ text: `🔁 Повторное обращение по заявке #${id}`, message_thread_id: WEDDING_TOPIC });
    expect(sandbox.messages(CORPORATE)).toEqual([]);
    expect(sandbox.messages(LEADS_CHAT)).toEqual([]);

    clock.advance(30 * MIN);
    expect(await server.app.get(HousekeepingService).remind()).toBe(1);
    expect(sandbox.messages(WEDDING).find((m) => m.text.startsWith('⏰'))).toMatchObject({
      reply_to_message_id: card.message_id,
      message_thread_id: WEDDING_TOPIC,
    });
  });

  it('a card already published stays where it went when the routes change; its repeats ping it there', async () => {
    const dbPath = join(tmp.dir, `routing-${++n}.sqlite`);
    await boot({ dbPath });
    const first = lead({ telegram: '@route_moved', phone: '+79990008833', ...from('corporate') });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = cardIn(CORPORATE, id)!;
    await server.close();
    await boot({ env: {}, dbPath });
    await postLead(server, lead({ telegram: '@route_moved', phone: '+79990008844' }));
    await server.outbox.whenIdle();
    expect(sandbox.messages(CORPORATE).find((m) => m.reply_to_message_id === card.message_id)?.text).toBe(
      `🔁 Повторное обращение по заявке #${id}`,
    );
    // A new lead of that source goes to LEADS_CHAT_ID now.
    const next = await submit(from('corporate'));
    expect(cardIn(LEADS_CHAT, next)).toBeDefined();
  });
  it('a routed chat the bot was removed from holds back no other chat’s reminders', async () => {
    await boot();
    for (let i = 0; i < 20; i += 1) await submit(from('corporate'));
    const main = await submit();
    sandbox.addBot(CORPORATE, 'kicked');
    const housekeeping = server.app.get(HousekeepingService);
    clock.advance(31 * MIN);
    expect(await housekeeping.remind()).toBe(0);
    // Refused for good: each corporate lead's trace says so once, and the next run gets to the others.
    expect(await sqlRow(server.db, "select count(*) as n from lead_events where kind = 'reminder_failed'")).toEqual({ n: 20 });
    clock.advance(MIN);
    expect(await housekeeping.remind()).toBe(1);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith(`⏰ Заявка #${main} `))).toHaveLength(1);
    expect(
      sandbox
        .callsOf('sendMessage')
        .filter((c) => String(c.params.chat_id) === String(CORPORATE) && String(c.params.text).startsWith('⏰')),
    ).toHaveLength(20);
  });
});

describe('presses and commands in routed chats', () => {
  it('presses work in each chat, on the lead’s own card only; a chat not routed is refused', async () => {
    await boot({ polling: true });
    const wedding = await submit(from('wedding'));
    const corporate = await submit(from('corporate'));
    const weddingCard = cardIn(WEDDING, wedding)!;
    const corporateCard = cardIn(CORPORATE, corporate)!;

    expect(await press(WEDDING, weddingCard.message_id, `lead:${wedding}:new:in_progress`)).toBe('Готово: 🛠 В работе');
    expect(await press(CORPORATE, corporateCard.message_id, `lead:${corporate}:new:spam`)).toBe('Готово: 🚫 Спам');
    await waitFor(() => cardIn(WEDDING, wedding)!.text.includes('В работе'), 5000, 'the wedding card rewritten');
    await waitFor(() => cardIn(CORPORATE, corporate)!.text.includes('Спам'), 5000, 'the corporate card rewritten');
    expect(await sqlRow(server.db, 'select status from leads where id = ?', wedding)).toEqual({ status: 'in_progress' });

    // The wedding lead's button on the corporate card (a forged or old press): not its card.
    expect(await press(CORPORATE, corporateCard.message_id, `lead:${wedding}:in_progress:won`)).toBe(ru.press.staleCard);
    // The admin chat is no leads chat.
    const elsewhere = sandbox.say(ADMIN_CHAT, 'сообщение');
    expect(await press(ADMIN_CHAT, elsewhere, `lead:${wedding}:in_progress:won`)).toBe(ru.press.foreignChat);
    expect(await sqlRow(server.db, 'select status from leads where id = ?', wedding)).toEqual({ status: 'in_progress' });

    // Commands answer in a routed chat too, in the topic they were sent in.
    expect(await command(CORPORATE, '/stickers_new')).not.toBe(ru.commands.wrongChat);
    const asked = sandbox.say(WEDDING, '/stickers_new', DEFAULT_USER, WEDDING_TOPIC);
    const reply = await waitFor(
      () => sandbox.messages(WEDDING).find((m) => m.reply_to_message_id === asked && m.from.is_bot),
      5000,
      'the answer in the wedding topic',
    );
    expect(reply.message_thread_id).toBe(WEDDING_TOPIC);
    expect(reply.text).not.toBe(ru.commands.wrongChat);
  });
});

describe('group migration of a routed chat', () => {
  it('the routed chat’s new id is learnt and kept (restarts included), its cards re-addressed, ops asked to update LEADS_ROUTES', async () => {
    const dbPath = join(tmp.dir, `routing-${++n}.sqlite`);
    const NEW_CORPORATE = -1001000000099;
    await boot({ dbPath, polling: true });
    const before = await submit(from('corporate'));
    sandbox.migrateChat(CORPORATE, NEW_CORPORATE);
    const alerts = watchAlerts(server);
    const after = await submit(from('corporate'));
    expect(cardIn(NEW_CORPORATE, after)).toBeDefined();
    expect(await stored(after)).toMatchObject({ chat_id: String(NEW_CORPORATE) });
    // The card sent before the migration is addressed to the new chat (the sandbox copied no messages: its press
    // would be of a message in the old chat, so only the stored address is checked).
    expect(await stored(before)).toMatchObject({ chat_id: String(NEW_CORPORATE) });
    expect(await alerts()).toEqual([{ key: `chat_migrated:${NEW_CORPORATE}`, result: 'sent' }]);
    expect(sandbox.messages(ADMIN_CHAT).at(-1)?.text).toBe(
      `ℹ️ Группа заявок стала супергруппой: новый id ${NEW_CORPORATE} (был ${CORPORATE}). Карточки идут туда; обновите LEADS_ROUTES (corporate).`,
    );
    // The default chat did not move.
    const plain = await submit();
    expect(cardIn(LEADS_CHAT, plain)).toBeDefined();
    // Presses in the new chat are taken.
    expect(await press(NEW_CORPORATE, cardIn(NEW_CORPORATE, after)!.message_id, `lead:${after}:new:in_progress`)).toBe(
      'Готово: 🛠 В работе',
    );

    await server.close();
    const calls = sandbox.callsOf('sendMessage').length;
    await boot({ dbPath });
    const later = await submit(from('corporate'));
    expect(cardIn(NEW_CORPORATE, later)).toBeDefined();
    // Straight to the new chat: nothing more was sent to the old id.
    expect(
      sandbox
        .callsOf('sendMessage')
        .slice(calls)
        .filter((c) => String(c.params.chat_id) === String(CORPORATE)),
    ).toEqual([]);
  });
});

describe('LEADS_ROUTES at start', () => {
  const refused = async (routes: string): Promise<string[]> => {
    try {
      await boot({ env: { LEADS_ROUTES: routes } });
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    throw new Error(`LEADS_ROUTES=${routes} started`);
  };

  it('a bad value stops the start with one line per bad entry, naming it', async () => {
    expect(await refused(`wedding=-100x`)).toEqual([
      'LEADS_ROUTES entry 1 ("wedding=-100x") must name a numeric chat id like -1001234567890 after the "="',
    ]);
    expect(await refused(`wedding=${WEDDING}:0`)).toEqual([
      `LEADS_ROUTES entry 1 ("wedding=${WEDDING}:0") must have a positive whole topic id after the ":" (message_thread_id), or none`,
    ]);
    expect(await refused(`wedding=${WEDDING},Wedding=${CORPORATE}`)).toEqual([
      `LEADS_ROUTES entry 2 ("Wedding=${CORPORATE}") repeats the source "Wedding" (each source once)`,
    ]);
    expect(await refused(`${WEDDING},свадьба=${CORPORATE}, bad name=${CORPORATE}`)).toEqual([
      `LEADS_ROUTES entry 1 ("${WEDDING}") must be source=chat_id or source=chat_id:topic_id, the source a name like wedding (as LANDING_SOURCE)`,
      `LEADS_ROUTES entry 3 ("bad name=${CORPORATE}") must be source=chat_id or source=chat_id:topic_id, the source a name like wedding (as LANDING_SOURCE)`,
    ]);
    // Nothing was started: no call reached Telegram.
    expect(sandbox.state.calls).toEqual([]);
  });

  it('the topics: LEADS_THREAD_ID and ADMIN_THREAD_ID are positive whole numbers, each with its chat', () => {
    const base = { LEADS_SECRET: 'a-long-enough-secret', LEADS_IP_SALT: 'salt' };
    const problems = (env: Record<string, string>) => {
      try {
        loadServerConfig({ ...base, ...env });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ LEADS_CHAT_ID: '-1001', LEADS_THREAD_ID: 'twelve', ADMIN_CHAT_ID: '-1002', ADMIN_THREAD_ID: '0' })).toEqual([
      'LEADS_THREAD_ID must be a topic id (message_thread_id), a positive whole number like 12 (got "twelve")',
      'ADMIN_THREAD_ID must be a topic id (message_thread_id), a positive whole number like 12 (got "0")',
    ]);
    expect(problems({ LEADS_THREAD_ID: '12', ADMIN_THREAD_ID: '7' })).toEqual([
      'LEADS_THREAD_ID is set but LEADS_CHAT_ID is not (a topic of which chat?)',
      'ADMIN_THREAD_ID is set but ADMIN_CHAT_ID is not (a topic of which chat?)',
    ]);
    const config = loadServerConfig({ ...base, LEADS_CHAT_ID: '-1001', LEADS_THREAD_ID: '12', LEADS_ROUTES: 'a=-1003:4,b=-1004' });
    expect(config.telegram).toMatchObject({
      leadsThreadId: 12,
      adminThreadId: null,
      routes: [
        { source: 'a', chatId: '-1003', threadId: 4 },
        { source: 'b', chatId: '-1004', threadId: null },
      ],
    });
    // Nothing set: as before.
    expect(loadServerConfig(base).telegram).toMatchObject({ leadsThreadId: null, adminThreadId: null, routes: [] });
  });
});
