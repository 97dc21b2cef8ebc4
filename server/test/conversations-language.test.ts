/**
 * The bot answers a visitor in their Telegram app's language (`language_code`) where it has one (ru, en), else in
 * LEADS_LOCALE's: a visitor of an English page who writes to a Russian team's bot reads English. The group keeps
 * LEADS_LOCALE's words. Against the sandbox, on both databases.
 */
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { callBotApi, LEADS_CHAT, lead, memberActions, postLead, sandboxSuite } from './harness';
import { LeadMessagesRepository } from '../src/conversations/lead-messages.repository';

const ENGLISH: SandboxUser = { id: 7101, is_bot: false, first_name: 'Emma', username: 'emma_w', language_code: 'en-GB' };
const GERMAN: SandboxUser = { id: 7102, is_bot: false, first_name: 'Jonas', language_code: 'de' };
const RUSSIAN: SandboxUser = { id: 7103, is_bot: false, first_name: 'Вера', language_code: 'ru' };
const { sandbox, boot } = sandboxSuite((s) => {
  for (const user of [ENGLISH, GERMAN, RUSSIAN]) s.state.addChat({ id: user.id, type: 'private', title: user.first_name });
});
const { command, press } = memberActions(sandbox);

describe("the visitor's language", () => {
  it("a Russian team's bot answers an English app in English: the link, /help, /stop, a message bound to no lead", async () => {
    const server = await boot({ polling: true });
    expect(await command(ENGLISH.id, '/start', ENGLISH)).toMatch(/^Hello! To connect this chat with your request/);
    expect(await command(ENGLISH.id, '/help', ENGLISH)).toMatch(/^🤖 This is your chat with a manager about your request/);
    expect(await command(ENGLISH.id, '/stop', ENGLISH)).toMatch(/^This chat is not connected with any request yet/);
    expect(await command(ENGLISH.id, 'Is anyone there?', ENGLISH)).toMatch(/^This chat is not connected with any request yet/);
    const created = await postLead(server, lead({ telegram: '@emma_w' }));
    const payload = new URL(String(created.body.telegram_link)).searchParams.get('start')!;
    expect(await command(ENGLISH.id, `/start ${payload}`, ENGLISH)).toBe(
      `Thank you! This is your request #${created.body.lead_number}. A manager has it and will write to you here, in this chat.`,
    );
    expect(await command(LEADS_CHAT, '/help')).toMatch(/^🤖 Команды бота:/);
  });

  it("what the database could not serve is said in the visitor's language too: a message, a command, a press", async () => {
    const server = await boot({ polling: true });
    const messages = server.app.get(LeadMessagesRepository);
    const locked = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    jest.spyOn(messages, 'latestLeadOf').mockRejectedValueOnce(locked());
    expect(await command(ENGLISH.id, 'Hello?', ENGLISH)).toMatch(/^⚠️ The bot could not save this message/);
    jest.spyOn(messages, 'stop').mockRejectedValueOnce(locked());
    expect(await command(ENGLISH.id, '/stop', ENGLISH)).toMatch(/^⚠️ Command not carried out/);
    jest.spyOn(messages, 'activeLeadsOf').mockRejectedValueOnce(locked());
    const { message_id } = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
      chat_id: ENGLISH.id,
      text: 'Choose',
      reply_markup: { inline_keyboard: [[{ text: '#1', callback_data: 'talk:1' }]] },
    });
    expect(await press(ENGLISH.id, message_id, 'talk:1', ENGLISH)).toMatch(/^Not done: the leads server could not save the press/);
  });

  it("a language the bot has no words for gets LEADS_LOCALE's", async () => {
    await boot({ polling: true });
    expect(await command(GERMAN.id, '/start', GERMAN)).toMatch(/^Здравствуйте! Чтобы связать этот чат с заявкой/);
  });

  it('with LEADS_LOCALE=en: a Russian app reads Russian, an app in another language English', async () => {
    await boot({ polling: true, env: { LEADS_LOCALE: 'en' } });
    expect(await command(RUSSIAN.id, '/start', RUSSIAN)).toMatch(/^Здравствуйте! Чтобы связать этот чат с заявкой/);
    expect(await command(GERMAN.id, '/start', GERMAN)).toMatch(/^Hello! To connect this chat with your request/);
  });
});
