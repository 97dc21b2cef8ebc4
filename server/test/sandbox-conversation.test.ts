/**
 * The sandbox's side of a conversation: copyMessage (a copy of a text or a media message into another chat, 400 for a
 * message that is not there, 403 for a user who blocked the bot), setMessageReaction, and the control API's `say`
 * with `reply_to_message_id`, `photo` and `document`, and `block`.
 */
import { BOT_USER, startSandbox, type SandboxUser, type TelegramSandbox } from '@stickers/telegram-sandbox';

let sandbox: TelegramSandbox;
const GROUP = -1001000000001;
const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна' };

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

beforeEach(async () => {
  sandbox = await startSandbox();
  sandbox.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' });
});
afterEach(async () => {
  await sandbox.stop();
});

describe('say: replies, photos, documents', () => {
  it('a reply to a message, a photo with a caption, a document without one; the bot gets each as Telegram sends it', async () => {
    const card = (await call('sendMessage', { chat_id: GROUP, text: 'Карточка' })).body.result.message_id as number;
    const reply = await control('say', { chat_id: GROUP, text: 'ответ', reply_to_message_id: card });
    expect(reply.status).toBe(200);
    const photo = await control('say', { chat_id: VISITOR.id, text: 'макет', photo: true, from: VISITOR });
    const doc = await control('say', { chat_id: VISITOR.id, text: '', document: true, from: VISITOR });
    const updates = sandbox.state.updates.map((u) => u.message as any);
    expect(updates[0]).toMatchObject({ message_id: reply.body.message_id, text: 'ответ', reply_to_message: { message_id: card } });
    expect(updates[1]).toMatchObject({ message_id: photo.body.message_id, caption: 'макет', photo: [{ file_id: expect.any(String) }] });
    expect(updates[1].text).toBeUndefined();
    expect(updates[2]).toMatchObject({ message_id: doc.body.message_id, document: { file_id: expect.any(String) } });
    expect(updates[2].caption).toBeUndefined();
    expect(updates[2].text).toBeUndefined();
  });

  it('refuses a reply to a message that is not there, and an empty text without media', async () => {
    expect((await control('say', { chat_id: GROUP, text: 'x', reply_to_message_id: 999 })).status).toBe(400);
    expect((await control('say', { chat_id: GROUP, text: '' })).status).toBe(400);
  });
});

describe('copyMessage', () => {
  it('copies a text and a photo (caption replaced) as replies; answers { message_id }', async () => {
    const card = (await call('sendMessage', { chat_id: GROUP, text: 'Карточка' })).body.result.message_id as number;
    const text = (await control('say', { chat_id: VISITOR.id, text: 'Привет', from: VISITOR })).body.message_id as number;
    const photo = (await control('say', { chat_id: VISITOR.id, text: 'макет', photo: true, from: VISITOR })).body.message_id as number;
    const a = await call('copyMessage', {
      chat_id: GROUP,
      from_chat_id: VISITOR.id,
      message_id: text,
      reply_parameters: { message_id: card },
    });
    expect(a.status).toBe(200);
    expect(Object.keys(a.body.result)).toEqual(['message_id']);
    const b = await call('copyMessage', { chat_id: GROUP, from_chat_id: VISITOR.id, message_id: photo, caption: 'Анна: макет' });
    const copies = sandbox.messages(GROUP).filter((m) => m.from.id === BOT_USER.id && m.message_id !== card);
    expect(copies.map((m) => [m.message_id, m.text, m.reply_to_message_id, m.photo !== undefined])).toEqual([
      [a.body.result.message_id, 'Привет', card, false],
      [b.body.result.message_id, 'Анна: макет', undefined, true],
    ]);
    // A caption is for media only.
    const refused = await call('copyMessage', { chat_id: GROUP, from_chat_id: VISITOR.id, message_id: text, caption: 'x' });
    expect(refused.status).toBe(400);
  });

  it('400 for a message that is not there; 403 once the user blocked the bot (POST /sandbox/api/block)', async () => {
    const missing = await call('copyMessage', { chat_id: VISITOR.id, from_chat_id: GROUP, message_id: 4242 });
    expect([missing.status, missing.body.description]).toEqual([400, 'Bad Request: message to copy not found']);
    const reply = (await control('say', { chat_id: GROUP, text: 'Здравствуйте' })).body.message_id as number;
    expect((await call('copyMessage', { chat_id: VISITOR.id, from_chat_id: GROUP, message_id: reply })).status).toBe(200);
    expect((await control('block', { user_id: VISITOR.id })).body).toEqual({ blocked: [VISITOR.id] });
    const blocked = await call('copyMessage', { chat_id: VISITOR.id, from_chat_id: GROUP, message_id: reply });
    expect([blocked.status, blocked.body]).toEqual([
      403,
      { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
    ]);
    expect((await call('sendMessage', { chat_id: VISITOR.id, text: 'x' })).status).toBe(403);
  });
});

describe('setMessageReaction', () => {
  it("sets the bot's reaction on a message; 400 for a message that is not there", async () => {
    const said = (await control('say', { chat_id: GROUP, text: 'ответ' })).body.message_id as number;
    const ok = await call('setMessageReaction', { chat_id: GROUP, message_id: said, reaction: [{ type: 'emoji', emoji: '👍' }] });
    expect([ok.status, ok.body.result]).toEqual([200, true]);
    expect(sandbox.state.message(GROUP, said)?.reactions).toEqual(['👍']);
    expect((await call('setMessageReaction', { chat_id: GROUP, message_id: 999, reaction: [] })).status).toBe(400);
  });
});
