/**
 * `/help` through the real app and the Telegram sandbox: the bot answers with its menu's commands and their
 * descriptions, in the configured language, in every chat (what the bot can do is no secret).
 */
import { ADMIN_CHAT, LEADS_CHAT, memberActions, sandboxSuite } from './harness';

const PRIVATE_CHAT = 777002;
const OTHER_GROUP = -100777003;
const suite = sandboxSuite((s) => {
  s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' });
  s.state.addChat({ id: OTHER_GROUP, type: 'supergroup', title: 'Другая группа' });
});
const { sandbox } = suite;
const { command } = memberActions(sandbox);
/** The app with the bot polling, once it has launched. */
const boot = (env: Record<string, string> = {}) => suite.boot({ polling: true, env });

/** The menu the bot registered (setMyCommands), as `/help` must list it. */
const menuLines = () =>
  (sandbox.state.commands as { command: string; description: string }[]).map((c) => `/${c.command} — ${c.description}`);

describe('/help', () => {
  it('lists every command of the menu with its description, in Russian by default, in every chat', async () => {
    await boot();
    const expected = ['🤖 Команды бота:', ...menuLines()].join('\n');
    expect(menuLines()).toHaveLength(6);
    expect(expected).toContain('/stickers_stats — Статистика заявок за 7 и 30 дней');
    for (const chat of [LEADS_CHAT, ADMIN_CHAT, PRIVATE_CHAT, OTHER_GROUP]) expect(await command(chat, '/help')).toBe(expected);
    // Addressed to this bot by name, as Telegram writes a command picked from a group's menu.
    expect(await command(LEADS_CHAT, '/help@stickers_leads_bot')).toBe(expected);
  });

  it('in English with LEADS_LOCALE=en', async () => {
    await boot({ LEADS_LOCALE: 'en' });
    const reply = await command(LEADS_CHAT, '/help');
    expect(reply).toBe(['🤖 The bot’s commands:', ...menuLines()].join('\n'));
    expect(reply).toContain('/stickers_stats — Lead statistics for 7 and 30 days');
  });
});
