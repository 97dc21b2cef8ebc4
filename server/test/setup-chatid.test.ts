/**
 * `/stickers_chatid` (docs/requirements.md §16.2): in any group — configured or not — the bot answers with the lines
 * of .env for that chat and the topic the command was sent in.
 */
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { memberActions, sandboxSuite, waitFor } from './harness';

const PRIVATE_CHAT = 777002;
const suite = sandboxSuite((s) => s.state.addChat({ id: PRIVATE_CHAT, type: 'private', title: 'Личный чат' }));
const { sandbox } = suite;
const { command } = memberActions(sandbox);
/** The app with the bot polling, once it has launched. */
const boot = () => suite.boot({ polling: true });

describe('/stickers_chatid', () => {
  it('in a group the server is not configured for: its id, for the leads group and for the admin chat', async () => {
    const group = sandbox.addChat({ title: 'Новая группа', type: 'supergroup', bot: { status: 'member' } });
    await boot();
    expect(await command(group.id, '/stickers_chatid')).toBe(
      [
        'Для .env (группа заявок):',
        `LEADS_CHAT_ID=${group.id}`,
        '',
        'Для чата админов — то же под именами:',
        `ADMIN_CHAT_ID=${group.id}`,
      ].join('\n'),
    );
  });

  it('in a forum topic: the topic too, and the answer in that topic', async () => {
    const forum = sandbox.addChat({ title: 'Форум', type: 'supergroup', bot: { status: 'member' }, topics: [{ id: 12, name: 'Заявки' }] });
    await boot();
    const asked = sandbox.say(forum.id, '/stickers_chatid', DEFAULT_USER, 12);
    const reply = await waitFor(
      () => sandbox.messages(forum.id).find((m) => m.reply_to_message_id === asked && m.from.is_bot),
      5000,
      'the answer',
    );
    expect(reply.message_thread_id).toBe(12);
    expect(reply.text.split('\n')).toEqual([
      'Для .env (группа заявок):',
      `LEADS_CHAT_ID=${forum.id}`,
      'LEADS_THREAD_ID=12',
      '',
      'Для чата админов — то же под именами:',
      `ADMIN_CHAT_ID=${forum.id}`,
      'ADMIN_THREAD_ID=12',
    ]);
  });

  it('in a private chat: where to send it instead', async () => {
    await boot();
    expect(await command(PRIVATE_CHAT, '/stickers_chatid')).toBe(
      'Это личный чат с ботом. Добавьте бота в группу заявок и отправьте /stickers_chatid там (в нужной теме).',
    );
  });

  it('is among the commands the bot registers', async () => {
    await boot();
    expect(sandbox.state.commands).toContainEqual({
      command: 'stickers_chatid',
      description: 'ID этого чата и темы для настройки (LEADS_CHAT_ID, LEADS_THREAD_ID)',
    });
  });
});
