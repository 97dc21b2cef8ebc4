/**
 * The bot's ways into the inbox (LEADS_INBOX_URL): `/stickers_inbox` with a `web_app` button in the private chat (which
 * then keeps the inbox as its menu button) and in a group a `url` button to that private chat (`/start inbox`); the managers' menu buttons set at launch, and
 * none for the visitors' chats; against the sandbox, which refuses what Telegram refuses (a `web_app` button in a group,
 * a malformed menu button).
 */
import { join } from 'node:path';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { botLaunched, CapturingLogger, LEADS_CHAT, memberActions, sandboxSuite } from './harness';

const PRIVATE_CHAT = DEFAULT_USER.id;
/** A visitor's private chat with the bot. */
const VISITOR_CHAT = 777_000_111;
const INBOX_URL = 'https://leads.example.com/inbox';
const INBOX_BUTTON = { type: 'web_app' as const, text: 'Инбокс', web_app: { url: INBOX_URL } };
const { tmp, sandbox, start } = sandboxSuite((s) => {
  s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' });
  s.state.addChat({ id: VISITOR_CHAT, type: 'private', title: 'Посетитель' });
});
let n = 0;
const startBot = (env: Record<string, string> = {}, logger?: CapturingLogger) =>
  start({ dbPath: join(tmp.dir, `bot-inbox-${(n += 1)}.sqlite`), polling: true, env, logger });

/** The bot's last message in a chat (its answer to the command just sent). */
const lastAnswer = (chatId: number) =>
  sandbox
    .messages(chatId)
    .filter((m) => m.from.is_bot)
    .at(-1)!;

async function botApi(method: string, params: Record<string, unknown>) {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return (await res.json()) as { ok: boolean; result?: unknown; description?: string };
}

describe('/stickers_inbox and the menu button', () => {
  it('with LEADS_INBOX_URL: a web_app button in the private chat, which keeps the inbox as its menu button; a url button in the leads group', async () => {
    await startBot({ LEADS_INBOX_URL: INBOX_URL });
    await botLaunched(sandbox);
    expect(sandbox.state.commands).toContainEqual({
      command: 'stickers_inbox',
      description: 'Инбокс заявок: список, поиск, графики (Mini App)',
    });
    // The private chats are the visitors' too: their menu button is Telegram's own.
    expect(sandbox.state.menuButton(null)).toEqual({ type: 'commands' });
    expect(sandbox.state.menuButton(PRIVATE_CHAT)).toEqual({ type: 'commands' });

    const { command } = memberActions(sandbox);
    expect(await command(PRIVATE_CHAT, '/stickers_inbox')).toBe('📥 Инбокс заявок: список, поиск, статусы и графики.');
    expect(lastAnswer(PRIVATE_CHAT).reply_markup).toEqual({
      inline_keyboard: [[{ text: '📥 Открыть инбокс', web_app: { url: INBOX_URL } }]],
    });
    expect(sandbox.state.menuButton(PRIVATE_CHAT)).toEqual(INBOX_BUTTON);
    expect(sandbox.state.menuButton(VISITOR_CHAT)).toEqual({ type: 'commands' });

    expect(await command(LEADS_CHAT, '/stickers_inbox')).toBe(
      '📥 Инбокс заявок: список, поиск, статусы и графики. Он открывается в личном чате с ботом: кнопка ниже ведёт туда, и у поля ввода появится кнопка «Инбокс».',
    );
    const toPrivateChat = `https://t.me/stickers_leads_bot?start=inbox`;
    expect(lastAnswer(LEADS_CHAT).reply_markup).toEqual({ inline_keyboard: [[{ text: '📥 Открыть инбокс', url: toPrivateChat }]] });
  });

  it("the group's button opens the private chat with `/start inbox`, answered there as `/stickers_inbox` is", async () => {
    await startBot({ LEADS_INBOX_URL: INBOX_URL });
    await botLaunched(sandbox);
    const { command } = memberActions(sandbox);
    expect(await command(VISITOR_CHAT, '/start inbox', { ...DEFAULT_USER, id: VISITOR_CHAT })).toBe(
      '📥 Инбокс заявок: список, поиск, статусы и графики.',
    );
    expect(lastAnswer(VISITOR_CHAT).reply_markup).toEqual({
      inline_keyboard: [[{ text: '📥 Открыть инбокс', web_app: { url: INBOX_URL } }]],
    });
    expect(sandbox.state.menuButton(VISITOR_CHAT)).toEqual(INBOX_BUTTON);
  });

  it("at launch: the inbox's menu button in each manager's chat, Telegram's in the others; a manager with no chat yet is a line in the log", async () => {
    // As an older version left it: the inbox's button for every private chat.
    sandbox.state.setMenuButton(null, INBOX_BUTTON);
    const logger = new CapturingLogger();
    await startBot({ LEADS_INBOX_URL: INBOX_URL, LEADS_MANAGER_IDS: `${PRIVATE_CHAT},424242` }, logger);
    await botLaunched(sandbox);
    expect(sandbox.state.menuButton(PRIVATE_CHAT)).toEqual(INBOX_BUTTON);
    expect(sandbox.state.menuButton(VISITOR_CHAT)).toEqual({ type: 'commands' });
    expect(logger.lines).toContainEqual(
      expect.stringContaining("the inbox's menu button for manager 424242 is not set: 400: Bad Request: chat not found"),
    );
  });

  it('without LEADS_INBOX_URL: a short "not configured", and no menu button', async () => {
    await startBot();
    await botLaunched(sandbox);
    const { command } = memberActions(sandbox);
    expect(await command(PRIVATE_CHAT, '/stickers_inbox')).toBe('Инбокс не настроен: задайте LEADS_INBOX_URL.');
    expect(lastAnswer(PRIVATE_CHAT).reply_markup).toBeUndefined();
    expect(sandbox.callsOf('setChatMenuButton').map((c) => c.params)).toEqual([{ menu_button: { type: 'default' } }]);
    expect(sandbox.state.menuButton(null)).toEqual({ type: 'commands' });
  });
});

describe("the sandbox's Mini App buttons", () => {
  it('refuses a web_app button outside a private chat and one without an https address', async () => {
    const button = (url: string) => JSON.stringify({ inline_keyboard: [[{ text: 'Инбокс', web_app: { url } }]] });
    expect(await botApi('sendMessage', { chat_id: LEADS_CHAT, text: 'x', reply_markup: button(INBOX_URL) })).toMatchObject({
      ok: false,
      description: 'Bad Request: BUTTON_TYPE_INVALID',
    });
    expect(
      await botApi('sendMessage', { chat_id: PRIVATE_CHAT, text: 'x', reply_markup: button('ftp://leads.example.com') }),
    ).toMatchObject({
      ok: false,
      description: 'Bad Request: BUTTON_URL_INVALID',
    });
    expect((await botApi('sendMessage', { chat_id: PRIVATE_CHAT, text: 'x', reply_markup: button(INBOX_URL) })).ok).toBe(true);
  });

  it("checks setChatMenuButton's shape, and a chat's own button wins over the default", async () => {
    const set = (menu_button: unknown, chat_id?: number) => botApi('setChatMenuButton', { menu_button, ...(chat_id ? { chat_id } : {}) });
    expect((await set({ type: 'web_app', text: '', web_app: { url: INBOX_URL } })).description).toBe(
      'Bad Request: menu button text is empty',
    );
    expect((await set({ type: 'web_app', text: 'Инбокс' })).description).toBe('Bad Request: BUTTON_URL_INVALID');
    expect((await set({ type: 'web_app', text: 'Инбокс', web_app: { url: 'http://leads.example.com/inbox' } })).description).toBe(
      'Bad Request: BUTTON_URL_INVALID',
    );
    expect((await set({ type: 'game' })).description).toBe('Bad Request: unsupported menu button type');
    expect((await set({ type: 'commands' }, LEADS_CHAT)).description).toBe('Bad Request: chat_id must be a private chat');
    expect(sandbox.state.menuButton(null)).toEqual({ type: 'commands' });

    expect((await set({ type: 'web_app', text: 'Инбокс', web_app: { url: INBOX_URL } })).ok).toBe(true);
    expect((await set({ type: 'commands' }, PRIVATE_CHAT)).ok).toBe(true);
    expect(await botApi('getChatMenuButton', {})).toMatchObject({ result: { type: 'web_app', text: 'Инбокс' } });
    expect(await botApi('getChatMenuButton', { chat_id: PRIVATE_CHAT })).toMatchObject({ result: { type: 'commands' } });
  });
});
