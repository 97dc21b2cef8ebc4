/**
 * What `setup` and `doctor` need of the Telegram sandbox (docs/architecture.md, "The Telegram sandbox"): chats the bot
 * is not in, the bot added (my_chat_member), privacy mode, rights and permissions as getChat / getChatMember give
 * them, refusals where the bot may not write, and a control API that refuses a body it cannot read.
 */
import { BOT_USER, DEFAULT_USER, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';

let sandbox: TelegramSandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.stop());
afterEach(() => sandbox.state.reset());

async function call(method: string, params: Record<string, unknown>) {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function control(path: string, body: string | Uint8Array | undefined, contentType?: string) {
  const res = await fetch(`${sandbox.url}/sandbox/api/${path}`, {
    method: 'POST',
    headers: contentType ? { 'Content-Type': contentType } : {},
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Updates that wait, taken without confirming anything. */
async function pending(): Promise<any[]> {
  return (await call('getUpdates', { timeout: 0 })).body.result;
}

describe('sandbox control API: a body it cannot read is refused', () => {
  it('415 for a body that is not application/json (curl -d sends a form), naming what came', async () => {
    const form = await control('say', 'chat_id=-1001000000001&text=hi', 'application/x-www-form-urlencoded');
    expect(form).toEqual({ status: 415, body: { error: expect.stringContaining('Content-Type: application/json') } });
    expect(form.body.error).toContain('"application/x-www-form-urlencoded"');
    // Bytes, not a string: fetch would label a string text/plain.
    const none = await control('say', new TextEncoder().encode(JSON.stringify({ chat_id: -1001000000001, text: 'hi' })));
    expect(none.status).toBe(415);
    expect(none.body.error).toContain('no Content-Type');
    expect(sandbox.messages(-1001000000001)).toEqual([]);
  });

  it('400 for JSON that does not parse or is not an object, and for a field that is not what it must be', async () => {
    expect(await control('say', '{"chat_id":', 'application/json')).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^the body is not JSON: /) },
    });
    expect(await control('say', '[1,2]', 'application/json')).toEqual({ status: 400, body: { error: 'the body must be a JSON object' } });
    expect(await control('say', JSON.stringify({ chat_id: 'abc', text: 'hi' }), 'application/json')).toEqual({
      status: 400,
      body: { error: '"chat_id" must be a whole number (got "abc")' },
    });
    expect(await control('press', JSON.stringify({ chat_id: -1001000000001, data: 'x' }), 'application/json')).toEqual({
      status: 400,
      body: { error: '"message_id" must be a whole number (got nothing)' },
    });
    expect((await control('faults', JSON.stringify({ kind: 'explode' }), 'application/json')).body.error).toMatch(
      /^"kind" must be one of /,
    );
    expect(sandbox.messages(-1001000000001)).toEqual([]);
  });

  it('a POST without a body is an empty object (reset, faults/clear); a JSON body with a charset is JSON', async () => {
    expect(await control('reset', undefined)).toEqual({ status: 200, body: { ok: true } });
    const said = await control('say', JSON.stringify({ chat_id: '-1001000000001', text: 'привет' }), 'application/json; charset=utf-8');
    expect(said.status).toBe(200);
    expect(sandbox.messages(-1001000000001).map((m) => m.text)).toEqual(['привет']);
  });
});

describe('a chat the bot is not in, and the bot added to it', () => {
  it('is "chat not found" until the bot is added; the addition reaches the bot as my_chat_member', async () => {
    const created = await control(
      'chats',
      JSON.stringify({ title: 'Новая группа', is_forum: true, topics: [{ id: 7, name: 'Заявки' }] }),
      'application/json',
    );
    expect(created.status).toBe(200);
    const id = created.body.chat.id as number;
    expect((await call('getChat', { chat_id: id })).body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: chat not found',
    });
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).body.description).toBe('Bad Request: chat not found');
    // Nobody tells a bot about a group it is not in.
    sandbox.say(id, '/stickers_chatid', DEFAULT_USER, 7);
    expect(await pending()).toEqual([]);

    const added = await control('members', JSON.stringify({ chat_id: id, user_id: BOT_USER.id, status: 'member' }), 'application/json');
    expect(added.status).toBe(200);
    const [update] = await pending();
    expect(update.my_chat_member).toEqual({
      chat: { id, type: 'supergroup', title: 'Новая группа', is_forum: true },
      from: DEFAULT_USER,
      date: expect.any(Number),
      old_chat_member: { status: 'left', user: BOT_USER },
      new_chat_member: { status: 'member', user: BOT_USER },
    });
    const chat = (await call('getChat', { chat_id: id })).body.result;
    expect(chat).toMatchObject({
      id,
      type: 'supergroup',
      is_forum: true,
      permissions: { can_send_messages: true, can_manage_topics: false },
    });
    expect((await call('getChatMember', { chat_id: id, user_id: BOT_USER.id })).body.result).toEqual({ status: 'member', user: BOT_USER });
  });

  it('privacy mode: a plain member bot gets commands, not chatter; an administrator gets both', async () => {
    const id = sandbox.addChat({ title: 'Тихая группа', type: 'supergroup', bot: { status: 'member' } }).id;
    sandbox.say(id, 'всем привет');
    sandbox.say(id, '/start@some_other_bot');
    sandbox.say(id, '/stickers_chatid');
    sandbox.say(id, `/stickers_chatid@${BOT_USER.username}`);
    expect((await pending()).map((u) => u.message.text)).toEqual(['/stickers_chatid', `/stickers_chatid@${BOT_USER.username}`]);
    expect((await call('getMe', {})).body.result.can_read_all_group_messages).toBe(false);

    sandbox.state.updates = [];
    sandbox.addBot(id, 'administrator');
    sandbox.say(id, 'всем привет');
    expect((await pending()).map((u) => Object.keys(u).find((k) => k !== 'update_id'))).toEqual(['my_chat_member', 'message']);
  });

  it('a message in a forum topic carries its thread id', async () => {
    const id = sandbox.addChat({ title: 'Форум', type: 'supergroup', bot: { status: 'member' }, topics: [{ id: 5, name: 'Заявки' }] }).id;
    sandbox.say(id, '/stickers_chatid', DEFAULT_USER, 5);
    const [update] = await pending();
    expect(update.message).toMatchObject({ chat: { id, is_forum: true }, message_thread_id: 5, is_topic_message: true });
  });
});

describe('where the bot may not write', () => {
  it('restricted without can_send_messages: getChatMember says so, sends are refused as Telegram refuses them', async () => {
    const id = sandbox.addChat({ title: 'Ограниченная', type: 'supergroup', bot: { status: 'restricted', rights: {} } }).id;
    expect((await call('getChatMember', { chat_id: id, user_id: BOT_USER.id })).body.result).toMatchObject({
      status: 'restricted',
      is_member: true,
      can_send_messages: false,
      until_date: 0,
    });
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: not enough rights to send text messages to the chat',
    });
    expect((await call('sendChatAction', { chat_id: id, action: 'typing' })).status).toBe(400);
    sandbox.setMember(id, BOT_USER, 'restricted', { can_send_messages: true });
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).status).toBe(200);
  });

  it('a plain member where members may not write is refused; an administrator there is not', async () => {
    const id = sandbox.addChat({
      title: 'Только админы',
      type: 'supergroup',
      permissions: { can_send_messages: false },
      bot: { status: 'member' },
    }).id;
    expect((await call('getChat', { chat_id: id })).body.result.permissions.can_send_messages).toBe(false);
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).status).toBe(400);
    sandbox.addBot(id, 'administrator', { can_manage_topics: false });
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).status).toBe(200);
    expect((await call('getChatMember', { chat_id: id, user_id: BOT_USER.id })).body.result).toMatchObject({
      status: 'administrator',
      can_manage_topics: false,
    });
  });

  it('a bot that left or was removed gets 403 as Telegram gives it', async () => {
    const id = sandbox.addChat({ title: 'Бывшая', type: 'supergroup', bot: { status: 'left' } }).id;
    expect((await call('getChat', { chat_id: id })).body).toEqual({
      ok: false,
      error_code: 403,
      description: 'Forbidden: bot is not a member of the supergroup chat',
    });
    sandbox.addBot(id, 'kicked');
    expect((await call('sendMessage', { chat_id: id, text: 'x' })).body.description).toBe(
      'Forbidden: bot was kicked from the supergroup chat',
    );
  });

  it('sendChatAction in a topic: refused for an unknown or closed topic, as a message would be', async () => {
    const id = sandbox.addChat({
      title: 'Темы',
      type: 'supergroup',
      bot: { status: 'administrator' },
      topics: [{ id: 3, name: 'Открытая' }],
    }).id;
    expect((await call('sendChatAction', { chat_id: id, action: 'typing', message_thread_id: 3 })).body).toEqual({
      ok: true,
      result: true,
    });
    expect((await call('sendChatAction', { chat_id: id, action: 'typing', message_thread_id: 99 })).body.description).toBe(
      'Bad Request: message thread not found',
    );
    sandbox.closeTopic(id, 3);
    expect((await call('sendChatAction', { chat_id: id, action: 'typing', message_thread_id: 3 })).body.description).toBe(
      'Bad Request: TOPIC_CLOSED',
    );
  });

  it('a reset brings added chats back as they were added: the bot out again, their topics open', async () => {
    const id = sandbox.addChat({ title: 'Снова', type: 'supergroup', topics: [{ id: 4, name: 'Т' }] }).id;
    sandbox.addBot(id, 'administrator');
    sandbox.closeTopic(id, 4);
    sandbox.state.reset();
    expect((await call('getChat', { chat_id: id })).body.description).toBe('Bad Request: chat not found');
    expect(sandbox.state.topic(id, 4)).toEqual({ id: 4, name: 'Т' });
  });
});
