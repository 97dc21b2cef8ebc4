/** The Telegram sandbox is as strict as Telegram where it matters, so tests against it mean something. */
import { BOT_USER, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { Telegraf } from 'telegraf';

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
  it('refuses HTML that Telegram would refuse', async () => {
    for (const text of ['<b>open', '<div>x</div>', '<b><i>x</b></i>', '<a>no href</a>']) {
      const res = await call('sendMessage', { chat_id: CHAT, text, parse_mode: 'HTML' });
      expect(res.status).toBe(400);
      expect(res.body.description).toMatch(/^Bad Request: can't parse entities/);
    }
    const ok = await call('sendMessage', { chat_id: CHAT, text: '<b>Заявка</b> &lt;x&gt; &amp; <a href="https://t.me/x">ссылка</a>', parse_mode: 'HTML' });
    expect(ok.body.result.text).toBe('Заявка <x> & ссылка');
    expect(ok.body.result.entities).toEqual([
      { type: 'bold', offset: 0, length: 6 },
      { type: 'text_link', offset: 13, length: 6, url: 'https://t.me/x' },
    ]);
  });

  it('refuses over 4096 characters, callback_data over 64 bytes, unknown chats and unknown messages', async () => {
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x'.repeat(4097) })).body.description).toBe('Bad Request: message is too long');
    const markup = { inline_keyboard: [[{ text: 'b', callback_data: 'я'.repeat(33) }]] };
    expect((await call('sendMessage', { chat_id: CHAT, text: 'x', reply_markup: markup })).body.description).toBe('Bad Request: BUTTON_DATA_INVALID');
    expect((await call('sendMessage', { chat_id: 5, text: 'x' })).body.description).toBe('Bad Request: chat not found');
    expect((await call('editMessageText', { chat_id: CHAT, message_id: 99, text: 'x' })).body.description).toBe('Bad Request: message to edit not found');
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
    const hanging = call('getMe', {});
    const raced = await Promise.race([hanging.then(() => 'answered'), new Promise((r) => setTimeout(() => r('hanging'), 200))]);
    expect(raced).toBe('hanging');
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
    const sent = await bot.telegram.sendMessage(CHAT, 'карточка', { reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: 'lead:1:in_progress' }]] } });
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
