/**
 * `/help` through the real app and the Telegram sandbox: in a group the bot answers with its menu's commands and their
 * descriptions, in the configured language (what the bot can do is no secret); in the private chat, where visitors
 * write to the team, what that chat is for, and the inbox's command to a manager.
 */
import { ADMIN_CHAT, LEADS_CHAT, memberActions, sandboxSuite } from './harness';

const PRIVATE_CHAT = 777002;
/** A visitor writes to the bot in their private chat, whose id is theirs; so does a manager in theirs. */
const VISITOR = { id: PRIVATE_CHAT, is_bot: false, first_name: 'Вера' };
const MANAGER = { id: 777004, is_bot: false, first_name: 'Мария' };
const OTHER_GROUP = -100777003;
const suite = sandboxSuite((s) => {
  s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' });
  s.state.addChat({ id: OTHER_GROUP, type: 'supergroup', title: 'Другая группа' });
  s.state.addChat({ id: MANAGER.id, type: 'private', title: 'Мария' });
});
const { sandbox } = suite;
const { command } = memberActions(sandbox);
/** The app with the bot polling, once it has launched. */
const boot = (env: Record<string, string> = {}) => suite.boot({ polling: true, env });

/** The menu the bot registered (setMyCommands), as `/help` must list it. */
const menuLines = () =>
  (sandbox.state.commands as { command: string; description: string }[]).map((c) => `/${c.command} — ${c.description}`);

describe('/help', () => {
  it('lists every command of the menu with its description, in Russian by default, in every group', async () => {
    await boot();
    const expected = ['🤖 Команды бота:', ...menuLines()].join('\n');
    expect(menuLines()).toHaveLength(6);
    expect(expected).toContain('/stickers_stats — Статистика заявок за 7 и 30 дней');
    for (const chat of [LEADS_CHAT, ADMIN_CHAT, OTHER_GROUP]) expect(await command(chat, '/help')).toBe(expected);
    // Addressed to this bot by name, as Telegram writes a command picked from a group's menu.
    expect(await command(LEADS_CHAT, '/help@stickers_leads_bot')).toBe(expected);
  });

  it("in the private chat: what the chat is for, not the team's commands; to a manager, the inbox's command too", async () => {
    await boot({ LEADS_INBOX_URL: 'https://leads.example.com/inbox', LEADS_MANAGER_IDS: String(MANAGER.id) });
    const visitorHelp = [
      '🤖 Это ваш чат с менеджером по заявке: пишите сюда, ответ придёт сюда же.',
      '/start — по какой заявке идут сообщения',
      '/stop — больше не писать вам здесь',
    ].join('\n');
    expect(await command(PRIVATE_CHAT, '/help', VISITOR)).toBe(visitorHelp);
    const inboxLine = menuLines().find((l) => l.startsWith('/stickers_inbox — '));
    expect(await command(MANAGER.id, '/help', MANAGER)).toBe(`${visitorHelp}\n${inboxLine}`);
  });

  it('in English with LEADS_LOCALE=en', async () => {
    await boot({ LEADS_LOCALE: 'en' });
    const reply = await command(LEADS_CHAT, '/help');
    expect(reply).toBe(['🤖 The bot’s commands:', ...menuLines()].join('\n'));
    expect(reply).toContain('/stickers_stats — Lead statistics for 7 and 30 days');
    expect(await command(PRIVATE_CHAT, '/help', VISITOR)).toMatch(/^🤖 This is your chat with a manager about your request/);
  });
});
