/**
 * LEADS_LOCALE=en end to end (docs/requirements.md, "Languages"): the app against the Telegram sandbox publishes an
 * English card with English buttons, sets an English command menu, and answers a press and a command in English.
 */
import { join } from 'node:path';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { FakeClock, LEADS_CHAT, NO_RATE_LIMITS, botLaunched, memberActions, sandboxSuite, submitLead, waitFor } from './harness';

const CYRILLIC = /[\u0400-\u04FF]/;
const { tmp, sandbox, start } = sandboxSuite();
const { press, command } = memberActions(sandbox);

describe('LEADS_LOCALE=en', () => {
  it('the card, its buttons, the menu, a press and a command answer are in English; times in the English format', async () => {
    const clock = new FakeClock();
    const server = await start({
      dbPath: join(tmp.dir, 'en.sqlite'),
      clock,
      polling: true,
      env: { ...NO_RATE_LIMITS, LEADS_LOCALE: 'en', LEADS_TIMEZONE: 'Europe/Moscow' },
    });
    await botLaunched(sandbox);
    expect((sandbox.state.commands as { description: string }[]).map((c) => c.description)).toContain('Lead statistics for 7 and 30 days');

    const id = await submitLead(server, {
      name: 'Anna Kim',
      telegram: '@anna_kim',
      phone: '+79991234567',
      date: 'February 14',
      guests: '30',
      comment: 'Wedding',
    });
    const card = await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Lead #${id}\n`)), 5000, 'the card');
    // The clock is 2026-11-29 09:00 UTC: noon in Moscow.
    expect(card.text.split('\n')).toEqual([
      `🆕 Lead #${id}`,
      '🕒 11/29/2026 12:00 PM',
      'Name: Anna Kim',
      'Telegram: @anna_kim',
      'Phone: +7 999 123 45 67',
      'Date: February 14',
      'Guests: 30',
      'Comment: Wedding',
      '',
      'Status: 🆕 New',
    ]);
    const keyboard = card.reply_markup!.inline_keyboard;
    expect(keyboard.map((row) => row.map((b) => b.text))).toEqual([['Take it', 'Spam'], ['✈️ Message @anna_kim']]);

    expect(await press(LEADS_CHAT, card.message_id, `lead:${id}:new:in_progress`)).toBe('Done: 🛠 In progress');
    const edited = await waitFor(
      () => sandbox.messages(LEADS_CHAT).find((m) => m.message_id === card.message_id && m.text.includes('Status: 🛠 In progress')),
      5000,
      'the card rewritten',
    );
    expect(edited.text).toContain(`Status: 🛠 In progress — ${DEFAULT_USER.first_name}`);
    expect(edited.reply_markup!.inline_keyboard[0].map((b) => b.text)).toEqual(['Won', 'Lost', 'Spam']);

    const stats = await command(LEADS_CHAT, '/stickers_stats');
    expect(stats.split('\n').slice(0, 4)).toEqual(['📊 Leads', '', 'Last 7 days: 1', '🆕 New: 0']);
    expect(stats).not.toMatch(CYRILLIC);
  });
});
