/**
 * The sandbox's forum supergroups behave as Telegram's where the app depends on it — a message goes into the
 * topic `message_thread_id` names (or, as a reply, into the topic of the message it replies to), a deleted or unknown
 * topic is "message thread not found", a closed one "TOPIC_CLOSED", and chats without topics behave as before.
 */
import { DEFAULT_CHATS, DEFAULT_USER, TelegramSandbox } from '@stickers/telegram-sandbox';

const LEADS = DEFAULT_CHATS[0].id;
const FORUM = -1001000000077;
const sandbox = new TelegramSandbox({
  chats: [...DEFAULT_CHATS, { id: FORUM, type: 'supergroup', title: 'Форум заявок', is_forum: true, topics: [{ id: 12, name: 'Заявки' }] }],
});

async function call(method: string, params: Record<string, unknown>) {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function control(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${sandbox.url}/sandbox/api/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(() => sandbox.start());
afterAll(() => sandbox.stop());
afterEach(() => sandbox.state.reset());

describe('a forum supergroup in the sandbox', () => {
  it('stores message_thread_id on a message sent into a topic, and shows it as Telegram does', async () => {
    const sent = await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'в теме' });
    expect(sent.status).toBe(200);
    expect(sent.body.result).toMatchObject({ message_thread_id: 12, is_topic_message: true, chat: { id: FORUM, is_forum: true } });
    const general = await call('sendMessage', { chat_id: FORUM, text: 'в общей теме' });
    expect(general.body.result.message_thread_id).toBeUndefined();
    expect(general.body.result.is_topic_message).toBeUndefined();
    expect(sandbox.topicMessages(FORUM, 12).map((m) => m.text)).toEqual(['в теме']);
    expect(sandbox.topicMessages(FORUM, null).map((m) => m.text)).toEqual(['в общей теме']);
    // Message ids come after the topic's own id, as in Telegram (the topic is the message that created it).
    expect(sent.body.result.message_id).toBeGreaterThan(12);
    const chat = await call('getChat', { chat_id: FORUM });
    expect(chat.body.result).toMatchObject({ id: FORUM, is_forum: true });
  });

  it('a reply without message_thread_id goes into the topic of the message it replies to', async () => {
    const card = (await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'карточка' })).body.result;
    const reply = await call('sendMessage', { chat_id: FORUM, text: 'ответ', reply_parameters: { message_id: card.message_id } });
    expect(reply.body.result).toMatchObject({ message_thread_id: 12, reply_to_message: { message_id: card.message_id } });
  });

  it('refuses an unknown or deleted topic with "message thread not found" and a closed one with "TOPIC_CLOSED"', async () => {
    expect((await call('sendMessage', { chat_id: FORUM, message_thread_id: 99, text: 'x' })).body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: message thread not found',
    });
    const card = (await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'карточка' })).body.result;

    sandbox.closeTopic(FORUM, 12);
    const closed = await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'x' });
    expect([closed.status, closed.body.description]).toEqual([400, 'Bad Request: TOPIC_CLOSED']);
    // A reply follows its message into the closed topic, and is refused there too.
    const reply = await call('sendMessage', { chat_id: FORUM, text: 'ответ', reply_parameters: { message_id: card.message_id } });
    expect(reply.body.description).toBe('Bad Request: TOPIC_CLOSED');
    // Messages already in a closed topic can still be edited.
    expect((await call('editMessageText', { chat_id: FORUM, message_id: card.message_id, text: 'изменена' })).status).toBe(200);
    // The chat's General topic still takes messages.
    expect((await call('sendMessage', { chat_id: FORUM, text: 'в общей теме' })).status).toBe(200);

    sandbox.reopenTopic(FORUM, 12);
    expect((await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'снова' })).status).toBe(200);

    sandbox.deleteTopic(FORUM, 12);
    expect((await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'x' })).body.description).toBe(
      'Bad Request: message thread not found',
    );
    // Its messages went with it.
    expect(sandbox.topicMessages(FORUM, 12)).toEqual([]);
    expect((await call('editMessageText', { chat_id: FORUM, message_id: card.message_id, text: 'y' })).body.description).toBe(
      'Bad Request: message to edit not found',
    );
  });

  it('sendDocument goes into a topic too, and is refused in a closed one', async () => {
    const form = (thread: number) => {
      const body = new FormData();
      body.set('chat_id', String(FORUM));
      body.set('message_thread_id', String(thread));
      body.set('document', new Blob(['a,b\r\n']), 'leads.csv');
      return body;
    };
    const post = (thread: number) =>
      fetch(`${sandbox.url}/bot${sandbox.token}/sendDocument`, { method: 'POST', body: form(thread) }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
      }));
    expect((await post(12)).body.result).toMatchObject({ message_thread_id: 12, document: { file_name: 'leads.csv' } });
    sandbox.closeTopic(FORUM, 12);
    expect((await post(12)).body.description).toBe('Bad Request: TOPIC_CLOSED');
  });

  it('the control API creates, closes, reopens and deletes topics; a member can write in a topic', async () => {
    const created = await control('topics', { chat_id: LEADS, name: 'Свадьбы' });
    expect(created.status).toBe(200);
    const thread = created.body.message_thread_id as number;
    // The chat became a forum.
    expect(sandbox.state.chats.get(LEADS)).toMatchObject({ is_forum: true, topics: [{ id: thread, name: 'Свадьбы' }] });
    expect((await call('sendMessage', { chat_id: LEADS, message_thread_id: thread, text: 'x' })).status).toBe(200);

    expect((await control('topics/close', { chat_id: LEADS, thread_id: thread })).body.topics).toEqual([
      { id: thread, name: 'Свадьбы', closed: true },
    ]);
    expect((await call('sendMessage', { chat_id: LEADS, message_thread_id: thread, text: 'x' })).body.description).toBe(
      'Bad Request: TOPIC_CLOSED',
    );
    await control('topics/reopen', { chat_id: LEADS, thread_id: thread });
    const said = await control('say', { chat_id: LEADS, text: '/stickers_new', thread_id: thread });
    expect(sandbox.state.message(LEADS, said.body.message_id)?.message_thread_id).toBe(thread);
    // The bot sees the member's message as a topic message.
    expect(sandbox.state.updates.at(-1)).toMatchObject({ message: { message_thread_id: thread, is_topic_message: true } });

    await control('topics/delete', { chat_id: LEADS, thread_id: thread });
    expect((await call('sendMessage', { chat_id: LEADS, message_thread_id: thread, text: 'x' })).body.description).toBe(
      'Bad Request: message thread not found',
    );
    expect((await control('topics/close', { chat_id: LEADS, thread_id: 4242 })).status).toBe(400);
  });

  it('the Bot API forum methods: createForumTopic, closeForumTopic, reopenForumTopic, deleteForumTopic', async () => {
    const created = await call('createForumTopic', { chat_id: FORUM, name: 'Корпоративы' });
    const id = created.body.result.message_thread_id as number;
    expect(created.body.result).toMatchObject({ name: 'Корпоративы' });
    expect((await call('closeForumTopic', { chat_id: FORUM, message_thread_id: id })).body.result).toBe(true);
    expect((await call('sendMessage', { chat_id: FORUM, message_thread_id: id, text: 'x' })).body.description).toBe(
      'Bad Request: TOPIC_CLOSED',
    );
    expect((await call('reopenForumTopic', { chat_id: FORUM, message_thread_id: id })).body.result).toBe(true);
    expect((await call('deleteForumTopic', { chat_id: FORUM, message_thread_id: id })).body.result).toBe(true);
    expect((await call('closeForumTopic', { chat_id: FORUM, message_thread_id: id })).body.description).toBe(
      'Bad Request: TOPIC_ID_INVALID',
    );
    expect((await call('createForumTopic', { chat_id: LEADS, name: 'x' })).body.description).toBe('Bad Request: the chat is not a forum');
  });

  it('reset brings topics back as the chat was added: open, none created since', async () => {
    sandbox.closeTopic(FORUM, 12);
    const extra = sandbox.createTopic(FORUM, 'Временная');
    sandbox.state.reset();
    expect(sandbox.state.chats.get(FORUM)?.topics).toEqual([{ id: 12, name: 'Заявки' }]);
    expect(sandbox.state.topic(FORUM, extra)).toBeUndefined();
    expect((await call('sendMessage', { chat_id: FORUM, message_thread_id: 12, text: 'x' })).status).toBe(200);
    expect(sandbox.state.chats.get(LEADS)?.is_forum).toBeUndefined();
  });

  it('a chat without topics behaves as before: no thread on its messages, and a thread id is refused', async () => {
    const plain = await call('sendMessage', { chat_id: LEADS, text: 'карточка' });
    expect(plain.body.result).toEqual({
      message_id: 1,
      from: expect.objectContaining({ is_bot: true }),
      chat: { id: LEADS, type: 'supergroup', title: DEFAULT_CHATS[0].title },
      date: expect.any(Number),
      text: 'карточка',
    });
    expect((await call('sendMessage', { chat_id: LEADS, message_thread_id: 5, text: 'x' })).body.description).toBe(
      'Bad Request: message thread not found',
    );
    expect(() => sandbox.say(LEADS, 'x', DEFAULT_USER, 5)).toThrow('no topic 5');
  });
});
