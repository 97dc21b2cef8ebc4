/** The Telegram sandbox is as strict as Telegram where it matters, so tests against it mean something. */
import { BOT_USER, DEFAULT_USER, startSandbox, type SandboxUser, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { Telegraf } from 'telegraf';
import { waitFor } from './harness';

let sandbox: TelegramSandbox;
const CHAT = -1001000000001;

async function call(method: string, params: Record<string, unknown>, token = sandbox.token) {
  const res = await fetch(`${sandbox.url}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => {
  await sandbox.stop();
});

describe('Telegram sandbox', () => {
  it('numbers messages from firstMessageId when given (npm run dev: past an earlier run), else from 1, per chat', async () => {
    const sent = async (box: TelegramSandbox, chat: number) => {
      const res = await fetch(`${box.url}/bot${box.token}/sendMessage`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ chat_id: chat, text: 'x' }),
      });
      return ((await res.json()) as { result: { message_id: number } }).result.message_id;
    };
    expect([await sent(sandbox, CHAT), await sent(sandbox, CHAT)]).toEqual([1, 2]);
    const later = await startSandbox({ firstMessageId: 1_765_000_000 });
    try {
      expect([await sent(later, CHAT), await sent(later, CHAT), await sent(later, -1001000000002)]).toEqual([
        1_765_000_000, 1_765_000_001, 1_765_000_000,
      ]);
    } finally {
      await later.stop();
    }
  });

  it('refuses HTML that Telegram would refuse', async () => {
    for (const text of ['<b>open', '<div>x</div>', '<b><i>x</b></i>', '<a>no href</a>']) {
      const res = await call('sendMessage', { chat_id: CHAT, text, parse_mode: 'HTML' });
      expect(res.status).toBe(400);
      expect(res.body.description).toMatch(/^Bad Request: can't parse entities/);
    }
    const ok = await call('sendMessage', {
      chat_id: CHAT,
      text: '<b>Заявка</b> &lt;x&gt; &amp; <a href="https://t.me/x">ссылка</a>',
      parse_mode: 'HTML',
    });
    expect(ok.body.result.text).toBe('Заявка <x> & ссылка');
    expect(ok.body.result.entities).toEqual([
      { type: 'bold', offset: 0, length: 6 },
      { type: 'text_link', offset: 13, length: 6, url: 'https://t.me/x' },
    ]);
  });

  it('refuses over 4096 characters, callback_data over 64 bytes, unknown chats and unknown messages', async () => {
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x'.repeat(4097) })).body.description).toBe(
      'Bad Request: message is too long',
    );
    const markup = { inline_keyboard: [[{ text: 'b', callback_data: 'я'.repeat(33) }]] };
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x', reply_markup: markup })).body.description).toBe(
      'Bad Request: BUTTON_DATA_INVALID',
    );
    expect((await call('sendMessage', { chat_id: 5, text: 'x' })).body.description).toBe('Bad Request: chat not found');
    expect((await call('editMessageText', { chat_id: CHAT, message_id: 99, text: 'x' })).body.description).toBe(
      'Bad Request: message to edit not found',
    );
  });

  it('measures length as Telegram does: UTF-16 code units of the text after entity parsing', async () => {
    const tooLong = 'Bad Request: message is too long';
    // Tags and entities do not count: 4096 characters of text inside markup is fine.
    const html = await call('sendMessage', { chat_id: CHAT, text: `<b>${'&amp;'.repeat(4000)}</b>${'x'.repeat(96)}`, parse_mode: 'HTML' });
    expect(html.status).toBe(200);
    expect(html.body.result.text).toHaveLength(4096);
    const overHtml = await call('sendMessage', { chat_id: CHAT, text: `<b>${'&lt;'.repeat(4097)}</b>`, parse_mode: 'HTML' });
    expect(overHtml.body.description).toBe(tooLong);
    // An emoji outside the Basic Multilingual Plane is two code units: 2048 of them fill the message.
    const emoji = await call('sendMessage', { chat_id: CHAT, text: '🎉'.repeat(2048) });
    expect(emoji.status).toBe(200);
    const over = await call('sendMessage', { chat_id: CHAT, text: '🎉'.repeat(2048) + 'x' });
    expect(over.body).toEqual({ ok: false, error_code: 400, description: tooLong });
    const id = emoji.body.result.message_id;
    const edit = (text: string) => call('editMessageText', { chat_id: CHAT, message_id: id, text });
    expect((await edit(`${'🎉'.repeat(2048)}!`)).body.description).toBe(tooLong);
    expect((await edit(`${'🎉'.repeat(2047)}!!`)).status).toBe(200);

    // callback_data: 64 bytes of UTF-8.
    const markup = (data: string) => ({ inline_keyboard: [[{ text: 'b', callback_data: data }]] });
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x', reply_markup: markup('я'.repeat(32)) })).status).toBe(200);
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x', reply_markup: markup(`${'я'.repeat(32)}1`) })).body.description).toBe(
      'Bad Request: BUTTON_DATA_INVALID',
    );

    // A callback answer: 200 characters; a longer one is refused and the query can still be answered.
    const query = sandbox.press(CHAT, id, 'lead:1:new:in_progress');
    const long = await call('answerCallbackQuery', { callback_query_id: query, text: '🎉'.repeat(100) + 'x' });
    expect(long.body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: MESSAGE_TOO_LONG' });
    expect((await call('answerCallbackQuery', { callback_query_id: query, text: '🎉'.repeat(100) })).status).toBe(200);
    expect(sandbox.state.callbackAnswers).toEqual([expect.objectContaining({ callback_query_id: query, text: '🎉'.repeat(100) })]);
  });

  it('knows who is in a group: getChatMember, getChatAdministrators, and a knob to promote or demote', async () => {
    const member = (userId: number, chat = CHAT) => call('getChatMember', { chat_id: chat, user_id: userId });
    // By default "you" (the page's user, the tests' presser) own every group, and the bot administers it.
    expect((await member(DEFAULT_USER.id)).body.result).toMatchObject({ status: 'creator', user: DEFAULT_USER });
    expect((await member(BOT_USER.id)).body.result).toMatchObject({ status: 'administrator', user: BOT_USER });
    const oleg: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег' };
    expect((await member(oleg.id)).body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: user not found' });

    // Whoever writes in a group is a plain member of it, and known elsewhere as having left.
    sandbox.say(CHAT, 'привет', oleg);
    expect((await member(oleg.id)).body.result).toEqual({ status: 'member', user: oleg });
    expect((await member(oleg.id, -1001000000002)).body.result).toEqual({ status: 'left', user: oleg });

    sandbox.setMember(CHAT, oleg, 'administrator');
    expect((await member(oleg.id)).body.result).toMatchObject({ status: 'administrator', user: oleg, can_manage_chat: true });
    const admins = await call('getChatAdministrators', { chat_id: CHAT });
    expect(admins.body.result.map((m: { user: { id: number }; status: string }) => [m.user.id, m.status])).toEqual([
      [DEFAULT_USER.id, 'creator'],
      [BOT_USER.id, 'administrator'],
      [oleg.id, 'administrator'],
    ]);

    // The same knob over HTTP, for the page and the end-to-end tests; reset brings the defaults back.
    const demote = await fetch(`${sandbox.url}/sandbox/api/members`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat_id: CHAT, user_id: oleg.id, status: 'member' }),
    });
    expect(demote.status).toBe(200);
    expect((await member(oleg.id)).body.result.status).toBe('member');
    sandbox.state.reset();
    expect((await member(oleg.id)).body.description).toBe('Bad Request: user not found');
    expect((await member(DEFAULT_USER.id)).body.result.status).toBe('creator');
    expect((await call('getChatMember', { chat_id: 5, user_id: DEFAULT_USER.id })).body.description).toBe('Bad Request: chat not found');
  });

  it("keeps a command list per scope, as Telegram does: getMyCommands gives the scope's own, an empty list deletes it", async () => {
    const list = (command: string) => [{ command, description: command }];
    const set = (commands: unknown[], scope?: unknown) => call('setMyCommands', { commands, ...(scope ? { scope } : {}) });
    expect((await set(list('everywhere'))).body.ok).toBe(true);
    expect((await set(list('in_groups'), { type: 'all_group_chats' })).body.ok).toBe(true);
    expect((await call('getMyCommands', {})).body.result).toEqual(list('everywhere'));
    expect((await call('getMyCommands', { scope: { type: 'all_group_chats' } })).body.result).toEqual(list('in_groups'));
    expect((await call('getMyCommands', { scope: { type: 'all_private_chats' } })).body.result).toEqual([]);
    expect(sandbox.state.commands).toEqual(list('in_groups'));
    expect(sandbox.state.privateCommands(DEFAULT_USER.id)).toEqual(list('everywhere'));
    expect((await call('deleteMyCommands', {})).body.ok).toBe(true);
    expect(sandbox.state.privateCommands(DEFAULT_USER.id)).toEqual([]);
    expect((await set([], { type: 'all_group_chats' })).body.ok).toBe(true);
    expect(sandbox.state.commands).toEqual([]);
    expect((await set(list('x'), { type: 'chat', chat_id: 424242 })).body.description).toBe('Bad Request: chat not found');
    expect((await set(list('x'), { type: 'somewhere' })).body.description).toBe('Bad Request: unsupported bot command scope type');
  });

  it("reset forgets the bot's commands and menu buttons, as a new bot's Telegram would (a test waits for the commands as a launch's sign)", async () => {
    expect((await call('setMyCommands', { commands: [{ command: 'stickers_new', description: 'x' }] })).body.ok).toBe(true);
    expect(
      (await call('setChatMenuButton', { menu_button: { type: 'web_app', text: 'x', web_app: { url: 'https://x.test/' } } })).body.ok,
    ).toBe(true);
    sandbox.state.reset();
    expect((await call('getMyCommands', {})).body.result).toEqual([]);
    expect((await call('getChatMenuButton', {})).body.result).toEqual({ type: 'commands' });
  });

  it('an edit that changes nothing is 400 "message is not modified"', async () => {
    const sent = await call('sendMessage', { chat_id: CHAT, text: 'a' });
    const again = await call('editMessageText', { chat_id: CHAT, message_id: sent.body.result.message_id, text: 'a' });
    expect(again.status).toBe(400);
    expect(again.body.description).toMatch(/^Bad Request: message is not modified/);
    expect((await call('editMessageText', { chat_id: CHAT, message_id: sent.body.result.message_id, text: 'b' })).status).toBe(200);
  });

  it('answers a wrong token with 401 and an unknown method with 404', async () => {
    expect((await call('getMe', {}, '1:wrong')).status).toBe(401);
    expect((await call('sendSticker', {})).status).toBe(404);
  });

  it('injects 429 with retry_after, 5xx, and hangs, then behaves again', async () => {
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 3 });
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502 });
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x' })).body).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 3',
      parameters: { retry_after: 3 },
    });
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x' })).status).toBe(502);
    sandbox.inject({ method: 'getMe', kind: 'hang' });
    let answered = false;
    const hanging = call('getMe', {}).then((res) => {
      answered = true;
      return res;
    });
    // The call has reached the sandbox and is held: nothing has answered it before the release.
    await waitFor(() => sandbox.callsOf('getMe').length === 1, 5000, 'the held getMe');
    await call('getChat', { chat_id: CHAT });
    expect(answered).toBe(false);
    sandbox.releaseHanging();
    expect((await hanging).status).toBe(502);
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x' })).status).toBe(200);
  });

  it('serves telegraf: long polling delivers a pressed button and the answer is recorded', async () => {
    const bot = new Telegraf(sandbox.token, { telegram: { apiRoot: `${sandbox.url}/` } });
    const pressed: string[] = [];
    bot.on('callback_query', async (ctx) => {
      pressed.push((ctx.callbackQuery as { data: string }).data);
      await ctx.answerCbQuery('готово');
    });
    void bot.launch({ dropPendingUpdates: false });
    const sent = await bot.telegram.sendMessage(CHAT, 'карточка', {
      reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: 'lead:1:in_progress' }]] },
    });
    expect(sent.from?.id).toBe(BOT_USER.id);
    const id = sandbox.press(CHAT, sent.message_id, 'lead:1:in_progress');
    const deadline = Date.now() + 5000;
    while (sandbox.state.callbackAnswers.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    bot.stop();
    expect(pressed).toEqual(['lead:1:in_progress']);
    expect(sandbox.state.callbackAnswers).toEqual([expect.objectContaining({ callback_query_id: id, text: 'готово' })]);
  });

  it('getUpdates waits up to its timeout when nothing is pending', async () => {
    const started = Date.now();
    const res = await call('getUpdates', { timeout: 1 });
    expect(res.body).toEqual({ ok: true, result: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
